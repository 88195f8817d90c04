package dev.switchboard.runtime.openai;

import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.spi.Settings;

import java.net.URI;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** The {@code openai} runtime's options, checked once at start-up. */
record OpenAiConfig(URI endpoint, String apiKey, String model, String systemPrompt, int maxToolRounds,
                    Duration timeout, RiskLevel approvalRisk, Map<String, OpenAiTool> tools) {

    /**
     * Reads and checks the options; an {@link IllegalArgumentException} names the option that is
     * missing or wrong and what it accepts.
     */
    static OpenAiConfig from(Settings settings) {
        String base = settings.get("openai-base-url").map(String::strip).filter(s -> !s.isEmpty()).orElseThrow(() ->
                new IllegalArgumentException("option --openai-base-url is required: the base URL of an "
                        + "OpenAI-compatible API, such as https://api.openai.com/v1 or http://127.0.0.1:11434/v1"));
        URI baseUri = OpenAiTool.httpUrl(base);
        if (baseUri == null) {
            throw new IllegalArgumentException("option --openai-base-url is '" + base
                    + "' but must be an http or https URL, such as http://127.0.0.1:11434/v1");
        }
        String model = settings.get("model").map(String::strip).filter(s -> !s.isEmpty()).orElseThrow(() ->
                new IllegalArgumentException("option --model is required: the model name the server knows, "
                        + "such as gpt-4o-mini or llama3.1"));
        int rounds = integer(settings, "max-tool-rounds", 8, 1, 100);
        Duration timeout = Duration.ofSeconds(integer(settings, "upstream-timeout-seconds", 60, 1, 3_600));
        String risk = settings.get("approval-risk").orElse("high").strip().toLowerCase(Locale.ROOT);
        RiskLevel approvalRisk = RiskLevel.fromWire(risk).orElseThrow(() -> new IllegalArgumentException(
                "option --approval-risk is '" + risk + "' but must be low, medium, high or critical"));
        List<OpenAiTool> tools = OpenAiTool.parseAll(settings.get("tools").orElse("[]"), timeout);
        String path = baseUri.getPath() == null ? "" : baseUri.getPath().replaceAll("/+$", "");
        URI endpoint = baseUri.resolve(path + "/chat/completions");
        Map<String, OpenAiTool> byName = new LinkedHashMap<>();
        tools.forEach(t -> byName.put(t.name(), t));
        return new OpenAiConfig(endpoint, settings.get("openai-api-key").map(String::strip).orElse(""), model,
                settings.get("system-prompt").orElse(""), rounds, timeout, approvalRisk,
                Collections.unmodifiableMap(byName));
    }

    private static int integer(Settings settings, String key, int fallback, int min, int max) {
        Optional<String> v = settings.get(key);
        if (v.isEmpty()) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(v.get().strip());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("option --" + key + " is '" + v.get() + "' but must be an integer from "
                + min + " to " + max);
    }

    /** The text with the API key blanked out, for anything that may reach a log or a client. */
    String redact(String text) {
        return apiKey.length() < 4 || text == null ? text : text.replace(apiKey, "***");
    }

    @Override
    public String toString() {
        return "OpenAiConfig[endpoint=" + endpoint + ", model=" + model + ", tools=" + tools.keySet() + "]";
    }
}
