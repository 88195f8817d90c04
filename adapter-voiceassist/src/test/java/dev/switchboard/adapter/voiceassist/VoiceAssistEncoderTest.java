package dev.switchboard.adapter.voiceassist;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Citation;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.Role;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import static dev.switchboard.testkit.Fixtures.fixtureJson;
import static dev.switchboard.testkit.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

class VoiceAssistEncoderTest {
    private static final String RUN = "run-1";
    private static final String MESSAGE = "msg-550e8400-e29b-41d4-a716-446655440000";

    private final VoiceAssistTesting voice = new VoiceAssistTesting();

    private List<JsonNode> encode(Event... events) {
        return voice.encode(RUN, events);
    }

    private static List<String> keys(JsonNode frame) {
        return frame.properties().stream().map(Map.Entry::getKey).toList();
    }

    @Test
    void connectedMatchesTheSpecExample() {
        assertThat(voice.opened()).containsExactly(fixtureJson("connected.json"));
    }

    @Test
    void pongMatchesTheSpecFormat() {
        assertThat(voice.pong()).containsExactly(fixtureJson("pong.json"));
    }

    @Test
    void messageStartedMatchesTheSpecExample() {
        List<JsonNode> frames = encode(new Event.MessageStarted(MESSAGE, Role.ASSISTANT));

        assertThat(frames).containsExactly(fixtureJson("message_start.json"));
        assertThat(keys(frames.get(0))).containsExactly("type", "message_id", "timestamp");
    }

    @Test
    void firstTextDeltaMatchesTheSpecChunkExample() {
        List<JsonNode> frames = encode(new Event.MessageStarted(MESSAGE, Role.ASSISTANT),
                new Event.TextDelta(MESSAGE, "Hypertension, or high blood pressure, "));

        assertThat(frames.get(1)).isEqualTo(fixtureJson("message_chunk.json"));
        assertThat(keys(frames.get(1))).containsExactly("type", "message_id", "content", "chunk_index");
    }

    @Test
    void messageCompletedMatchesTheSpecExample() {
        List<JsonNode> frames = encode(new Event.MessageCompleted(MESSAGE,
                "Hypertension is a chronic condition characterized by elevated blood pressure. "
                        + "Treatment involves lifestyle modifications and medications.",
                List.of(new Citation("cite-1", "medical_journal", "Blood Pressure Management in Clinical Practice",
                        "https://pubmed.ncbi.nlm.nih.gov/12345678", 1))));

        assertThat(frames).containsExactly(fixtureJson("message_complete.json"));
        assertThat(keys(frames.get(0))).containsExactly("type", "message_id", "content", "citations", "timestamp");
    }

    @Test
    void runFailedAfterAMessageMatchesTheSpecErrorExample() {
        List<JsonNode> frames = encode(new Event.MessageStarted(MESSAGE, Role.ASSISTANT),
                new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, "Failed to retrieve knowledge base references"));

        assertThat(frames.get(1)).isEqualTo(fixtureJson("error.json"));
        assertThat(keys(frames.get(1))).containsExactly("type", "message_id", "timestamp", "error");
    }

    @Test
    void runFailedNamesTheRunsLastMessageEvenWhenItCompleted() {
        List<JsonNode> frames = encode(
                new Event.MessageStarted("m1", Role.ASSISTANT),
                new Event.MessageCompleted("m1", "One.", List.of()),
                new Event.MessageStarted("m2", Role.ASSISTANT),
                new Event.TextDelta("m2", "Tw"),
                new Event.RunFailed(ErrorCode.TOOL_FAILED, "the search tool failed"));

        assertThat(frames.get(4).get("message_id").textValue()).isEqualTo("m2");
    }

    @Test
    void runFailedBeforeAnyMessageNamesNoMessage() {
        List<JsonNode> frames = encode(new Event.RunStarted(null), new Event.StepStarted("thinking"),
                new Event.RunFailed(ErrorCode.INTERNAL, "the agent runtime failed to start the run"));

        assertThat(frames).containsExactly(json("""
                {"type":"error","timestamp":"2025-11-22T12:34:56.789Z",
                 "error":{"code":"INTERNAL_ERROR","message":"the agent runtime failed to start the run"}}"""));
    }

    @Test
    void runFailedDoesNotNameAMessageOfAnotherRun() {
        voice.encode("run-a", new Event.MessageStarted("m-a", Role.ASSISTANT));

        List<JsonNode> frames = voice.encode("run-b", new Event.RunFailed(ErrorCode.CANCELLED, null));

        assertThat(frames).singleElement().satisfies(f -> assertThat(f.has("message_id")).isFalse());
    }

    @Test
    void aRunsMessagesAreForgottenWhenTheRunEnds() {
        encode(new Event.MessageStarted("m1", Role.ASSISTANT), new Event.TextDelta("m1", "a"), new Event.RunFinished());

        List<JsonNode> frames = encode(new Event.TextDelta("m1", "b"), new Event.RunFailed(ErrorCode.CANCELLED, null));

        assertThat(frames.get(0).get("chunk_index").intValue()).isZero();
        assertThat(frames.get(1).get("message_id").textValue()).isEqualTo("m1");
    }

    @Test
    void chunkIndexCountsFromZeroPerMessage() {
        List<JsonNode> frames = encode(
                new Event.MessageStarted("m1", Role.ASSISTANT),
                new Event.TextDelta("m1", "a"),
                new Event.TextDelta("m1", "b"),
                new Event.TextDelta("m1", "c"),
                new Event.MessageCompleted("m1", "abc", List.of()),
                new Event.MessageStarted("m2", Role.ASSISTANT),
                new Event.TextDelta("m2", "d"),
                new Event.TextDelta("m2", "e"));

        assertThat(frames).filteredOn(f -> f.get("type").textValue().equals("message_chunk"))
                .extracting(f -> f.get("message_id").textValue() + ":" + f.get("chunk_index").intValue())
                .containsExactly("m1:0", "m1:1", "m1:2", "m2:0", "m2:1");
    }

    @Test
    void interleavedMessagesCountTheirChunksApart() {
        List<JsonNode> frames = encode(
                new Event.MessageStarted("m1", Role.ASSISTANT),
                new Event.MessageStarted("m2", Role.ASSISTANT),
                new Event.TextDelta("m1", "a"),
                new Event.TextDelta("m2", "b"),
                new Event.TextDelta("m1", "c"));

        assertThat(frames.subList(2, 5))
                .extracting(f -> f.get("message_id").textValue() + ":" + f.get("chunk_index").intValue())
                .containsExactly("m1:0", "m2:0", "m1:1");
    }

    @Test
    void chunksOfAMessageJoinedMidwayAreNumberedFromZero() {
        assertThat(encode(new Event.TextDelta("m1", "late"), new Event.TextDelta("m1", " join")))
                .extracting(f -> f.get("chunk_index").intValue())
                .containsExactly(0, 1);
    }

    @Test
    void aCompletedMessageSeenAgainCountsItsChunksFromZero() {
        encode(new Event.TextDelta("m1", "a"), new Event.MessageCompleted("m1", "a", List.of()));

        assertThat(encode(new Event.TextDelta("m1", "b")).get(0).get("chunk_index").intValue()).isZero();
    }

    @Test
    void messageCompletedWithoutCitationsHasAnEmptyCitationsArray() {
        assertThat(encode(new Event.MessageCompleted("m1", "Hi.", List.of()))).containsExactly(json("""
                {"type":"message_complete","message_id":"m1","content":"Hi.","citations":[],
                 "timestamp":"2025-11-22T12:34:56.789Z"}"""));
    }

    @Test
    void citationWithoutAPageOmitsIt() {
        JsonNode frame = encode(new Event.MessageCompleted("m1", "Hi.", List.of(
                new Citation("cite-1", "medical_journal", "Hypertension Management Guidelines",
                        "https://example.com/article", 42),
                new Citation("cite-2", "guideline", "Guidance", "https://example.com/guide", null)))).get(0);

        assertThat(frame.get("citations")).isEqualTo(json("""
                [{"id":"cite-1","source_type":"medical_journal","title":"Hypertension Management Guidelines",
                  "url":"https://example.com/article","page":42},
                 {"id":"cite-2","source_type":"guideline","title":"Guidance","url":"https://example.com/guide"}]"""));
    }

    @Test
    void eventsWithoutAVoiceAssistMessageSendNothing() {
        assertThat(encode(
                new Event.RunStarted(null),
                new Event.StepStarted("thinking"),
                new Event.StepFinished("thinking"),
                new Event.ToolCallStarted("call-1", "search", "m1"),
                new Event.ToolCallArgs("call-1", "{\"q\":"),
                new Event.ToolCallArgs("call-1", "1}"),
                new Event.ToolCallCompleted("call-1", "search", json("{\"q\":1}")),
                new Event.ToolResult("call-1", "search", json("{\"q\":1}"), true, "found", "msg-tool"),
                new Event.ApprovalRequested("appr-1", "call-2", "order_test", "Orders a lab test",
                        json("{\"test\":\"CBC\"}"), "needed", RiskLevel.HIGH),
                new Event.ApprovalResolved("appr-1", true, "ok", "alice"),
                new Event.StateSnapshot(json("{\"a\":1}")),
                new Event.StateDelta(json("[{\"op\":\"add\",\"path\":\"/b\",\"value\":2}]")),
                new Event.Custom("x", json("{}")),
                new Event.ReasoningStarted("r1"),
                new Event.ReasoningDelta("r1", "hmm"),
                new Event.ReasoningCompleted("r1", "hmm"),
                new Event.Usage("model-x", 10, 2, null, null),
                new Event.RunFinished())).isEmpty();
    }

    @Test
    void timestampsAreUtcWithMillisecondsEvenWhenTheyAreZero() {
        long wholeSecond = Instant.parse("2025-01-15T10:30:00Z").toEpochMilli();

        assertThat(voice.encodeAt(wholeSecond, RUN, new Event.MessageStarted("m1", Role.ASSISTANT)).get(0)
                .get("timestamp").textValue()).isEqualTo("2025-01-15T10:30:00.000Z");
        assertThat(voice.encodeAt(wholeSecond + 123, RUN, new Event.MessageCompleted("m1", "", List.of())).get(0)
                .get("timestamp").textValue()).isEqualTo("2025-01-15T10:30:00.123Z");
        assertThat(voice.encodeAt(0, RUN, new Event.RunFailed(ErrorCode.INTERNAL, null)).get(0)
                .get("timestamp").textValue()).isEqualTo("1970-01-01T00:00:00.000Z");
    }

    @Test
    void errorAnsweredToTheConnectionHasTheSpecShapeWithoutMessageIdOrDetails() {
        List<JsonNode> frames = voice.encodeError(GatewayError.field(ErrorCode.MISSING_FIELD, "content",
                "content is required: a string of 1 to 10000 characters, not only whitespace"));

        assertThat(frames).containsExactly(json("""
                {"type":"error","timestamp":"2025-11-22T12:34:56.789Z",
                 "error":{"code":"MISSING_REQUIRED_FIELD",
                          "message":"content is required: a string of 1 to 10000 characters, not only whitespace"}}"""));
    }

    @Test
    void errorWithoutAMessageGetsTheCodesDefaultMessage() {
        assertThat(voice.encodeError(GatewayError.of(ErrorCode.BUSY, null)).get(0).get("error").get("message")
                .textValue()).isEqualTo(ErrorCode.BUSY.defaultMessage());
    }

    @Test
    void otherNotFoundErrorsAreShown() {
        assertThat(voice.encodeError(GatewayError.field(ErrorCode.NOT_FOUND, "run_id", "no active run to cancel")))
                .extracting(f -> f.get("error").get("code").textValue())
                .containsExactly("QUERY_PROCESSING_ERROR");
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "INVALID_JSON, INVALID_MESSAGE_FORMAT",
        "UNKNOWN_TYPE, UNKNOWN_MESSAGE_TYPE",
        "MISSING_FIELD, MISSING_REQUIRED_FIELD",
        "INVALID_FIELD, INVALID_MESSAGE_FORMAT",
        "AUTH_FAILED, AUTH_FAILED",
        "FORBIDDEN, AUTH_FAILED",
        "NOT_FOUND, QUERY_PROCESSING_ERROR",
        "CONFLICT, QUERY_PROCESSING_ERROR",
        "RATE_LIMITED, QUOTA_EXCEEDED",
        "MODERATION, QUERY_PROCESSING_ERROR",
        "TOOL_FAILED, QUERY_PROCESSING_ERROR",
        "UPSTREAM_FAILED, QUERY_PROCESSING_ERROR",
        "BUSY, QUERY_PROCESSING_ERROR",
        "CANCELLED, QUERY_PROCESSING_ERROR",
        "UNAVAILABLE, INTERNAL_ERROR",
        "INTERNAL, INTERNAL_ERROR",
    })
    void everyErrorCodeHasItsVoiceAssistCode(ErrorCode code, String voiceCode) {
        assertThat(voice.encodeError(GatewayError.of(code, "why")))
                .extracting(f -> f.get("error").get("code").textValue())
                .containsExactly(voiceCode);
        assertThat(encode(new Event.RunFailed(code, "why")))
                .extracting(f -> f.get("error").get("code").textValue())
                .containsExactly(voiceCode);
    }

    @ParameterizedTest
    @EnumSource(ErrorCode.class)
    void everyErrorCodeMapsToACodeOfTheSpecTable(ErrorCode code) {
        assertThat(VoiceAssistErrorCodes.of(code)).isIn("UNKNOWN_MESSAGE_TYPE", "INVALID_MESSAGE_FORMAT",
                "MISSING_REQUIRED_FIELD", "AUTH_FAILED", "QUOTA_EXCEEDED", "QUERY_PROCESSING_ERROR", "INTERNAL_ERROR");
    }
}
