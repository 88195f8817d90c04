package dev.switchboard.runtime.openai;

import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.spi.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OpenAiConfigTest {
    private final Map<String, String> options = new HashMap<>(Map.of(
            "openai-base-url", "http://127.0.0.1:11434/v1/", "model", "llama3.1"));

    private OpenAiConfig config() {
        Settings settings = key -> Optional.ofNullable(options.get(key));
        return OpenAiConfig.from(settings);
    }

    private String tools(String json) {
        options.put("tools", json);
        try {
            config();
            throw new AssertionError("accepted " + json);
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    @Test
    void theEndpointIsTheBaseUrlsChatCompletionsAndTheDefaultsApply() {
        OpenAiConfig c = config();

        assertThat(c.endpoint()).hasToString("http://127.0.0.1:11434/v1/chat/completions");
        assertThat(c.model()).isEqualTo("llama3.1");
        assertThat(c.apiKey()).isEmpty();
        assertThat(c.maxToolRounds()).isEqualTo(8);
        assertThat(c.timeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(c.approvalRisk()).isEqualTo(RiskLevel.HIGH);
        assertThat(c.tools()).isEmpty();
    }

    @Test
    void aMissingBaseUrlOrModelNamesTheOption() {
        options.remove("openai-base-url");
        assertThatThrownBy(this::config).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("option --openai-base-url is required");

        options.put("openai-base-url", "http://127.0.0.1:1/v1");
        options.remove("model");
        assertThatThrownBy(this::config).hasMessageStartingWith("option --model is required");
    }

    @Test
    void aBaseUrlThatIsNotHttpIsRefusedWithTheValue() {
        options.put("openai-base-url", "ftp://models");

        assertThatThrownBy(this::config).hasMessageContaining("'ftp://models'").hasMessageContaining("http or https");
    }

    @Test
    void anApprovalRiskOutsideTheLevelsIsRefused() {
        options.put("approval-risk", "severe");

        assertThatThrownBy(this::config).hasMessage(
                "option --approval-risk is 'severe' but must be low, medium, high or critical");
    }

    @Test
    void aToolHasItsDefaults() {
        options.put("tools", """
                [{"name": "get_weather", "url": "http://127.0.0.1:9/weather"}]""");

        OpenAiTool t = config().tools().get("get_weather");
        assertThat(t.method()).isEqualTo("POST");
        assertThat(t.risk()).isEqualTo(RiskLevel.LOW);
        assertThat(t.timeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(t.description()).isEmpty();
        assertThat(t.parameters()).hasToString("{\"type\":\"object\",\"properties\":{}}");
    }

    @Test
    void aToolReadsEveryField() {
        options.put("tools", """
                [{"name": "file_report", "description": "Files a report", "parameters": {"type": "object"},
                  "url": "https://reports.example/file", "method": "put", "headers": {"X-Key": "k"},
                  "timeoutSeconds": 5, "risk": "Critical"}]""");

        OpenAiTool t = config().tools().get("file_report");
        assertThat(t.method()).isEqualTo("PUT");
        assertThat(t.headers()).containsEntry("X-Key", "k");
        assertThat(t.timeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(t.risk()).isEqualTo(RiskLevel.CRITICAL);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{\"tools\": 1}                                          | option --tools must be a JSON array",
            "[{\"url\": \"http://h/x\"}]                               | option --tools: tool 0: field 'name' must be",
            "[{\"name\": \"a b\", \"url\": \"http://h/x\"}]              | option --tools: tool 0: field 'name' must be",
            "[{\"name\": \"t\"}]                                       | option --tools: tool 0 (t): field 'url' must be an absolute http or https URL, got nothing",
            "[{\"name\": \"t\", \"url\": \"/relative\"}]                 | option --tools: tool 0 (t): field 'url' must be an absolute http or https URL, got '/relative'",
            "[{\"name\": \"t\", \"url\": \"http://h/x\", \"method\": \"GET\"}] | option --tools: tool 0 (t): field 'method' must be POST, PUT or PATCH",
            "[{\"name\": \"t\", \"url\": \"http://h/x\", \"risk\": \"huge\"}]  | option --tools: tool 0 (t): field 'risk' must be low, medium, high or critical, got 'huge'",
            "[{\"name\": \"t\", \"url\": \"http://h/x\", \"timeoutSeconds\": 0}] | option --tools: tool 0 (t): field 'timeoutSeconds' must be an integer from 1 to 3600",
            "[{\"name\": \"t\", \"url\": \"http://h/x\", \"parameters\": []}] | option --tools: tool 0 (t): field 'parameters' must be a JSON schema object",
            "[{\"name\": \"t\", \"url\": \"http://h/x\", \"headers\": {\"A\": 1}}] | option --tools: tool 0 (t): field 'headers' value of A must be a string",
            "[{\"name\": \"t\", \"url\": \"http://h/x\", \"headers\": {\"Host\": \"h\"}}] | option --tools: tool 0 (t): field 'headers' cannot set Host",
            "[{\"name\": \"t\", \"url\": \"http://h/x\", \"uri\": \"x\"}]   | option --tools: tool 0 (t): field 'uri' is unknown",
            "[{\"name\": \"t\", \"url\": \"http://h/x\"}, {\"name\": \"t\", \"url\": \"http://h/y\"}] | option --tools: tool 1 (t) has the name of an earlier tool",
    })
    void aBadToolNamesTheToolAndTheField(String json, String message) {
        assertThat(tools(json)).startsWith(message);
    }

    @Test
    void theApiKeyIsRedactedFromMessages() {
        options.put("openai-api-key", "sk-secret-123");

        assertThat(config().redact("Incorrect API key provided: sk-secret-123.")).isEqualTo(
                "Incorrect API key provided: ***.");
        assertThat(config().toString()).doesNotContain("sk-secret-123");
    }
}
