package dev.switchboard.adapter.agui;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.testkit.Fixtures;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The test port of the official verifier rejects the streams the official client rejects. */
class OfficialVerifierTest {
    private static final String STARTED = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}";
    private static final String FINISHED = "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}";
    private static final String ERROR = "{\"type\":\"RUN_ERROR\",\"message\":\"x\"}";

    private static List<String> violations(String... events) {
        List<JsonNode> stream = Arrays.stream(events).map(Fixtures::json).toList();
        return OfficialVerifier.violations(stream);
    }

    @Test
    void acceptsAPairedStream() {
        assertThat(violations(STARTED, "{\"type\":\"STEP_STARTED\",\"stepName\":\"s\"}",
                "{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\",\"role\":\"assistant\"}",
                "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"d\"}",
                "{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m\"}",
                "{\"type\":\"STEP_FINISHED\",\"stepName\":\"s\"}", FINISHED)).isEmpty();
    }

    @Test
    void rejectsWhatTheOfficialClientRejects() {
        assertThat(violations("{\"type\":\"STEP_STARTED\",\"stepName\":\"s\"}")).isNotEmpty();
        assertThat(violations(STARTED, ERROR, FINISHED)).isNotEmpty();
        assertThat(violations(STARTED, FINISHED, "{\"type\":\"STEP_STARTED\",\"stepName\":\"s\"}")).isNotEmpty();
        assertThat(violations(STARTED, "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"d\"}"))
                .isNotEmpty();
        assertThat(violations(STARTED, "{\"type\":\"TOOL_CALL_END\",\"toolCallId\":\"c\"}")).isNotEmpty();
        assertThat(violations(STARTED, "{\"type\":\"STEP_STARTED\",\"stepName\":\"s\"}", FINISHED)).isNotEmpty();
        assertThat(violations(STARTED, "{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\",\"role\":\"tool\"}"))
                .isNotEmpty();
        assertThat(violations(STARTED, "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\","
                + "\"outcome\":{\"type\":\"interrupt\",\"interrupts\":[]}}")).isNotEmpty();
        assertThat(violations(STARTED, STARTED)).isNotEmpty();
    }
}
