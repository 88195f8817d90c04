package dev.switchboard.adapter.voiceassist;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Citation;
import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.Decoded;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;

import static dev.switchboard.testkit.Fixtures.fixture;
import static dev.switchboard.testkit.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

/** Whole exchanges of one connection, checked against the spec's "Connection Lifecycle" sequence. */
class VoiceAssistFlowTest {
    private static final Citation CITATION = new Citation("cite-1", "medical_journal",
            "Blood Pressure Management in Clinical Practice", "https://pubmed.ncbi.nlm.nih.gov/12345678", 1);

    private final VoiceAssistTesting voice = new VoiceAssistTesting();

    private static List<String> types(List<JsonNode> frames) {
        return frames.stream().map(f -> f.get("type").textValue()).toList();
    }

    private String startRun() {
        Decoded decoded = voice.decode(fixture("message.json"));
        return ((Command.StartRun) ((Decoded.Commands) decoded).commands().get(0)).runId();
    }

    @Test
    void questionIsAnsweredWithStartChunksAndCompleteWhileStepsToolsAndApprovalsSendNothing() {
        assertThat(types(voice.opened())).containsExactly("connected");
        String runId = startRun();

        List<JsonNode> frames = voice.encode(runId,
                new Event.RunStarted(null),
                new Event.StepStarted("thinking"),
                new Event.ToolCallStarted("call-1", "search_guidelines", null),
                new Event.ToolCallArgs("call-1", "{\"query\":\"hypertension\"}"),
                new Event.ToolCallCompleted("call-1", "search_guidelines", json("{\"query\":\"hypertension\"}")),
                new Event.ApprovalRequested("appr-1", "call-1", "search_guidelines", "Searches guidelines",
                        json("{\"query\":\"hypertension\"}"), "needs sources", RiskLevel.LOW),
                new Event.ApprovalResolved("appr-1", true, null, "clinician"),
                new Event.ToolResult("call-1", "search_guidelines", json("{\"query\":\"hypertension\"}"), true,
                        "3 guidelines", "msg-tool"),
                new Event.StepFinished("thinking"),
                new Event.MessageStarted("msg-1", Role.ASSISTANT),
                new Event.TextDelta("msg-1", "Hypertension, or high blood pressure, "),
                new Event.StateDelta(json("[{\"op\":\"add\",\"path\":\"/progress\",\"value\":0.5}]")),
                new Event.TextDelta("msg-1", "is a chronic condition. "),
                new Event.Custom("progress", json("{\"percent\":90}")),
                new Event.TextDelta("msg-1", "Treatment involves lifestyle changes."),
                new Event.MessageCompleted("msg-1", "Hypertension, or high blood pressure, is a chronic condition. "
                        + "Treatment involves lifestyle changes.", List.of(CITATION)),
                new Event.RunFinished());

        assertThat(types(frames)).containsExactly("message_start",
                "message_chunk", "message_chunk", "message_chunk", "message_complete");
        assertThat(frames).allSatisfy(f -> assertThat(f.get("message_id").textValue()).isEqualTo("msg-1"));
        List<JsonNode> chunks = frames.subList(1, 4);
        assertThat(chunks).extracting(c -> c.get("chunk_index").intValue()).containsExactly(0, 1, 2);
        JsonNode complete = frames.get(4);
        assertThat(chunks.stream().map(c -> c.get("content").textValue()).reduce("", String::concat))
                .isEqualTo(complete.get("content").textValue());
        assertThat(complete.get("citations")).isEqualTo(json("""
                [{"id":"cite-1","source_type":"medical_journal","title":"Blood Pressure Management in Clinical Practice",
                  "url":"https://pubmed.ncbi.nlm.nih.gov/12345678","page":1}]"""));
    }

    @Test
    void secondQuestionOnTheSameConnectionNumbersItsChunksFromZeroAgain() {
        String first = startRun();
        voice.encode(first, new Event.RunStarted(null), new Event.MessageStarted("msg-1", Role.ASSISTANT),
                new Event.TextDelta("msg-1", "a"), new Event.TextDelta("msg-1", "b"),
                new Event.MessageCompleted("msg-1", "ab", List.of()), new Event.RunFinished());
        String second = startRun();

        List<JsonNode> frames = voice.encode(second, new Event.RunStarted(null),
                new Event.MessageStarted("msg-2", Role.ASSISTANT), new Event.TextDelta("msg-2", "c"),
                new Event.MessageCompleted("msg-2", "c", List.of()), new Event.RunFinished());

        assertThat(frames.get(1).get("chunk_index").intValue()).isZero();
    }

    @Test
    void failedRunEndsTheStreamedMessageWithAnErrorNamingIt() {
        String runId = startRun();

        List<JsonNode> frames = voice.encode(runId,
                new Event.RunStarted(null),
                new Event.MessageStarted("msg-1", Role.ASSISTANT),
                new Event.TextDelta("msg-1", "Hypertension"),
                new Event.RunFailed(ErrorCode.UPSTREAM_FAILED,
                        "Failed to retrieve knowledge base references"));

        assertThat(types(frames)).containsExactly("message_start", "message_chunk", "error");
        assertThat(frames.get(2)).isEqualTo(json("""
                {"type":"error","message_id":"msg-1","timestamp":"2025-11-22T12:34:56.789Z",
                 "error":{"code":"QUERY_PROCESSING_ERROR","message":"Failed to retrieve knowledge base references"}}"""));
    }

    @Test
    void pingIsAnsweredWithPong() {
        Decoded decoded = voice.decode(fixture("ping.json"));

        assertThat(decoded).isEqualTo(Decoded.of(new Command.Ping()));
        assertThat(voice.pong()).containsExactly(json("{\"type\":\"pong\",\"timestamp\":\"2025-11-22T12:34:56.789Z\"}"));
    }

    @ParameterizedTest(name = "{1} from {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "{\"type\":\"typing\"}                               | UNKNOWN_MESSAGE_TYPE",
        "{\"content\":\"What is hypertension?\"}             | UNKNOWN_MESSAGE_TYPE",
        "{\"type\":\"message\",\"content\":\"hi\"            | INVALID_MESSAGE_FORMAT",
        "What is hypertension?                               | INVALID_MESSAGE_FORMAT",
        "[{\"type\":\"ping\"}]                               | INVALID_MESSAGE_FORMAT",
        "{\"type\":\"message\",\"content\":42}               | INVALID_MESSAGE_FORMAT",
        "{\"type\":\"message\",\"content\":\"\"}             | INVALID_MESSAGE_FORMAT",
        "{\"type\":\"message\",\"session_id\":\"s\"}         | MISSING_REQUIRED_FIELD",
    })
    void badInputIsAnsweredWithTheSpecsErrorCodeAndTheConnectionGoesOn(String input, String code) {
        Decoded decoded = voice.decode(input);

        assertThat(decoded).isInstanceOfSatisfying(Decoded.Failure.class, f ->
                assertThat(voice.encodeError(f.error())).singleElement().satisfies(frame -> {
                    assertThat(frame.get("type").textValue()).isEqualTo("error");
                    assertThat(frame.get("error").get("code").textValue()).isEqualTo(code);
                    assertThat(frame.get("error").get("message").textValue()).isNotBlank();
                }));
        assertThat(voice.decode(fixture("message_example.json"))).isInstanceOf(Decoded.Commands.class);
    }
}
