package dev.switchboard.adapter.hai;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Citation;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Json;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.testkit.CollectingFrameWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.switchboard.testkit.Fixtures.fixtureJson;
import static dev.switchboard.testkit.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

class HaiEncoderTest {
    private static final String SESSION = "123e4567...";
    private static final String RUN = "run-1";

    private final HaiTesting hai = new HaiTesting();

    private List<JsonNode> encode(Event... events) {
        return hai.encode(SESSION, RUN, events);
    }

    private JsonNode encodeError(GatewayError error) throws IOException {
        CollectingFrameWriter out = new CollectingFrameWriter();
        hai.session().encodeError(error, out);
        assertThat(out.json()).hasSize(1);
        return out.json().get(0);
    }

    private static JsonNode status(String status) {
        return json("{\"type\":\"status\",\"status\":\"" + status + "\",\"session_id\":\"" + SESSION + "\"}");
    }

    @Test
    void runStartedSendsThinkingStatus() {
        assertThat(encode(new Event.RunStarted(null))).containsExactly(status("thinking"));
    }

    @Test
    void stepStartedWithTheStatusAlreadySentSendsNothing() {
        assertThat(encode(new Event.RunStarted(null), new Event.StepStarted("thinking")))
                .containsExactly(status("thinking"));
    }

    @Test
    void reasoningShowsTheThinkingStatusAndNotItsText() {
        List<JsonNode> frames = encode(new Event.RunStarted(null), new Event.StepStarted("routing"),
                new Event.ReasoningStarted("r1"), new Event.ReasoningDelta("r1", "hmm"),
                new Event.ReasoningCompleted("r1", "hmm"), new Event.ReasoningStarted("r2"),
                new Event.Usage("model-x", 10, 2, null, null));

        assertThat(frames).containsExactly(status("thinking"), status("routing"), status("thinking"));
    }

    @Test
    void stepStartedWithAHaiStatusNameSendsThatStatusOncePerChange() {
        List<JsonNode> frames = encode(new Event.RunStarted(null),
                new Event.StepStarted("routing"), new Event.StepStarted("routing"),
                new Event.StepStarted("executing_tools"), new Event.StepStarted("thinking"));

        assertThat(frames).containsExactly(
                status("thinking"), status("routing"), status("executing_tools"), status("thinking"));
    }

    @Test
    void stepStartedWithAnyOtherNameSendsNothing() {
        assertThat(encode(new Event.StepStarted("planning"), new Event.StepStarted("completed"))).isEmpty();
    }

    @Test
    void stepStartedOfARunSeenMidwaySendsItsStatus() {
        assertThat(encode(new Event.StepStarted("routing"))).containsExactly(status("routing"));
    }

    @Test
    void eventsWithoutAHaiMessageSendNothing() {
        assertThat(encode(
                new Event.StepFinished("thinking"),
                new Event.MessageStarted("m1", Role.ASSISTANT),
                new Event.ToolCallStarted("call-1", "search", "m1"),
                new Event.ToolCallArgs("call-1", "{\"q\":"),
                new Event.ToolCallArgs("call-1", "1}"),
                new Event.ApprovalResolved("appr-1", true, "ok", "alice"),
                new Event.StateSnapshot(json("{\"a\":1}")),
                new Event.StateDelta(json("[{\"op\":\"add\",\"path\":\"/b\",\"value\":2}]")),
                new Event.Custom("x", json("{}")))).isEmpty();
    }

    @Test
    void textDeltaMatchesTheSpecChunkExample() {
        assertThat(encode(new Event.TextDelta("msg_001", "Based on ")))
                .containsExactly(fixtureJson("assistant_message_chunk.json"));
    }

    @Test
    void eachChunkNamesItsOwnMessageAndSessionWhenTheyAlternate() {
        List<JsonNode> frames = new ArrayList<>(encode(new Event.TextDelta("m1", "a"),
                new Event.TextDelta("m2", "b"), new Event.TextDelta("m1", "c")));
        frames.addAll(hai.encode("other-session", "run-2", new Event.TextDelta("m1", "d")));
        frames.addAll(encode(new Event.TextDelta("m1", "e")));

        assertThat(frames).extracting(f -> f.get("session_id").textValue() + "/" + f.get("message_id").textValue()
                        + ":" + f.get("content").textValue() + ":" + f.get("is_final").booleanValue())
                .containsExactly(SESSION + "/m1:a:false", SESSION + "/m2:b:false", SESSION + "/m1:c:false",
                        "other-session/m1:d:false", SESSION + "/m1:e:false");
    }

    @Test
    void messageCompletedWithoutCitationsIsAnEmptyFinalChunkWithoutMetadata() {
        assertThat(encode(new Event.MessageCompleted("msg_001", "Based on the rules.", List.of())))
                .containsExactly(json("""
                        {"type":"assistant_message_chunk","content":"","session_id":"123e4567...",
                         "message_id":"msg_001","is_final":true}"""));
    }

    @Test
    void messageCompletedWithCitationsCarriesThemInMetadataAndOmitsAbsentPages() {
        List<JsonNode> frames = encode(new Event.MessageCompleted("msg_001", "text", List.of(
                new Citation("c1", "regulation", "Food storage", "https://example.org/food", 12),
                new Citation("c2", "web", "Guidance", "https://example.org/guide", null))));

        assertThat(frames).containsExactly(json("""
                {"type":"assistant_message_chunk","content":"","session_id":"123e4567...",
                 "message_id":"msg_001","is_final":true,
                 "metadata":{"citations":[
                   {"id":"c1","source_type":"regulation","title":"Food storage","url":"https://example.org/food","page":12},
                   {"id":"c2","source_type":"web","title":"Guidance","url":"https://example.org/guide"}]}}"""));
    }

    @Test
    void toolCallCompletedMatchesTheSpecStartedExample() {
        assertThat(encode(new Event.ToolCallCompleted("call_abc123", "search_regulations",
                json("{\"query\":\"food safety\"}")))).containsExactly(fixtureJson("tool_call_started.json"));
    }

    @Test
    void successfulToolResultMatchesTheSpecCompletedExample() {
        assertThat(encode(new Event.ToolResult("call_abc123", "search_regulations", json("{\"query\":\"food safety\"}"),
                true, "Found 5 relevant regulations", "msg-tool-1")))
                .containsExactly(fixtureJson("tool_call_completed.json"));
    }

    @Test
    void failedToolResultHasFailedStatusAndTheReasonAsResult() {
        assertThat(encode(new Event.ToolResult("call_abc123", "search_regulations", json("{\"query\":\"food safety\"}"),
                false, "Database connection timeout", "msg-tool-1"))).containsExactly(json("""
                {"type":"tool_call","tool_call_id":"call_abc123","tool_name":"search_regulations",
                 "parameters":{"query":"food safety"},"session_id":"123e4567...","status":"failed",
                 "result":"Database connection timeout"}"""));
    }

    @Test
    void nestedToolParametersAreWrittenVerbatim() {
        JsonNode parameters = json("""
                {"filters":{"region":["NL","BE"],"since":2020,"exact":true,"score":0.5,"none":null},
                 "text":"caf\\u00e9 \\"quoted\\" \\ud83d\\ude00"}""");

        List<JsonNode> frames = encode(new Event.ToolCallCompleted("call-1", "search", parameters));

        assertThat(frames).singleElement().satisfies(f -> assertThat(f.get("parameters")).isEqualTo(parameters));
    }

    @Test
    void approvalRequestedMatchesTheSpecExample() {
        assertThat(encode(new Event.ApprovalRequested("appr_abc123", "call-9", "generate_inspection_report",
                "Generates official PDF inspection report that will be stored permanently",
                json("{\"inspection_id\":\"INS-2024-001\"}"),
                "User requested to finalize the inspection report", RiskLevel.HIGH)))
                .containsExactly(fixtureJson("tool_approval_request.json"));
    }

    @Test
    void approvalRequestedWithoutDescriptionOrReasoningSendsEmptyStrings() {
        assertThat(encode(new Event.ApprovalRequested("a1", "call-1", "delete_all", null, null, null,
                RiskLevel.CRITICAL))).singleElement().satisfies(f -> {
                    assertThat(f.get("tool_description").textValue()).isEmpty();
                    assertThat(f.get("reasoning").textValue()).isEmpty();
                    assertThat(f.get("parameters")).isEqualTo(Json.object());
                    assertThat(f.get("risk_level").textValue()).isEqualTo("critical");
                });
    }

    @Test
    void runFinishedSendsCompletedStatus() {
        assertThat(encode(new Event.RunFinished())).containsExactly(status("completed"));
    }

    @Test
    void runFailedSendsAnErrorNamingSessionAndRunThenCompletedStatus() {
        assertThat(encode(new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, "the model timed out")))
                .containsExactly(json("""
                        {"type":"error","error_code":"upstream_error","message":"the model timed out",
                         "details":{"session_id":"123e4567...","run_id":"run-1"}}"""), status("completed"));
    }

    @Test
    void runStateIsForgottenWhenTheRunEnds() {
        encode(new Event.RunStarted(null), new Event.RunFinished());

        assertThat(encode(new Event.StepStarted("thinking"))).containsExactly(status("thinking"));
    }

    @Test
    void errorWithDetailsMatchesTheSpecExample() throws IOException {
        assertThat(encodeError(new GatewayError(ErrorCode.MODERATION, "Your message contains prohibited content",
                Map.of("blocked_pattern", "profanity", "severity", "medium"))))
                .isEqualTo(fixtureJson("error_moderation.json"));
    }

    @Test
    void errorWithoutDetailsOmitsDetails() throws IOException {
        assertThat(encodeError(GatewayError.of(ErrorCode.BUSY, "a run is already active")))
                .isEqualTo(json("{\"type\":\"error\",\"error_code\":\"run_in_progress\","
                        + "\"message\":\"a run is already active\"}"));
    }

    @Test
    void decodeFailureIsAnsweredAsValidationErrorNamingTheField() throws IOException {
        Decoded.Failure failure = (Decoded.Failure)
                hai.session().decode("{\"type\":\"user_message\",\"session_id\":\"s\"}");

        JsonNode frame = encodeError(failure.error());

        assertThat(frame.get("error_code").textValue()).isEqualTo("validation_error");
        assertThat(frame.get("details")).isEqualTo(json("{\"field\":\"content\"}"));
        assertThat(frame.get("message").textValue()).startsWith("content");
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "INVALID_JSON, invalid_json",
        "UNKNOWN_TYPE, unknown_message_type",
        "MISSING_FIELD, validation_error",
        "INVALID_FIELD, validation_error",
        "AUTH_FAILED, auth_failed",
        "FORBIDDEN, invalid_session",
        "NOT_FOUND, validation_error",
        "CONFLICT, validation_error",
        "RATE_LIMITED, rate_limit_exceeded",
        "MODERATION, moderation_violation",
        "TOOL_FAILED, tool_execution_failed",
        "UPSTREAM_FAILED, upstream_error",
        "BUSY, run_in_progress",
        "CANCELLED, run_cancelled",
        "UNAVAILABLE, service_unavailable",
        "INTERNAL, internal_error",
    })
    void everyErrorCodeHasItsHaiErrorCode(ErrorCode code, String haiCode) throws IOException {
        assertThat(encodeError(GatewayError.of(code, null)).get("error_code").textValue()).isEqualTo(haiCode);
    }
}
