package dev.switchboard.adapter.agui;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.Role;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;

import static dev.switchboard.adapter.agui.AguiTesting.assertWellFormed;
import static dev.switchboard.adapter.agui.AguiTesting.callsWithoutTokenDetails;
import static dev.switchboard.adapter.agui.AguiTesting.types;
import static dev.switchboard.testkit.Fixtures.fixtureJson;
import static dev.switchboard.testkit.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

/** Every core event on the AGORA WebSocket, checked against the profile's examples. */
class AguiWsSessionTest {
    private static final String THREAD = "abc123-...";
    private static final String RUN = "run-456-...";

    private final AguiTesting ws = AguiTesting.ws();

    private List<JsonNode> at(long timestamp, Event event) {
        List<JsonNode> frames = ws.encodeAt(timestamp, THREAD, RUN, event);
        assertWellFormed(frames);
        return frames;
    }

    private List<JsonNode> encode(Event... events) {
        List<JsonNode> frames = ws.encode(THREAD, RUN, events);
        assertWellFormed(frames);
        return frames;
    }

    private static JsonNode status(String status, long timestamp) {
        return json("{\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{\"threadId\":\"" + THREAD + "\",\"runId\":\"" + RUN
                + "\",\"status\":\"" + status + "\"},\"timestamp\":" + timestamp + "}");
    }

    /** The example with its {@code null} fields removed: absent optional fields are left out. */
    private static JsonNode withoutNulls(String fixture) {
        ObjectNode node = (ObjectNode) fixtureJson(fixture);
        node.properties().removeIf(field -> field.getValue().isNull());
        return node;
    }

    @Test
    void runStartedMatchesTheProfileExampleThenSendsTheProcessingSnapshot() {
        assertThat(at(1705318200000L, new Event.RunStarted(null)))
                .containsExactly(fixtureJson("run_started.json"), status("processing", 1705318200000L));
    }

    @Test
    void runStartedOfAContinuedRunNamesItsParent() {
        assertThat(at(1705318200000L, new Event.RunStarted("run-1")).get(0).get("parentRunId").textValue())
                .isEqualTo("run-1");
    }

    @Test
    void runFinishedSendsTheCompletedSnapshotThenMatchesTheProfileExampleWithoutItsNullResult() {
        at(1705318200000L, new Event.RunStarted(null));

        assertThat(at(1705318205000L, new Event.RunFinished()))
                .containsExactly(status("completed", 1705318205000L), withoutNulls("run_finished.json"));
    }

    @Test
    void runFailedSendsRunErrorThenRunFinished() {
        at(1705318200000L, new Event.RunStarted(null));

        assertThat(at(1705318205000L, new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, "Error processing request")))
                .containsExactly(
                        json("{\"type\":\"RUN_ERROR\",\"message\":\"Error processing request\",\"code\":\"upstream_error\","
                                + "\"timestamp\":1705318205000}"),
                        withoutNulls("run_finished.json"));
    }

    @Test
    void runErrorHasTheProfileExampleShape() {
        JsonNode example = fixtureJson("run_error.json");

        JsonNode error = at(1705318205000L, new Event.RunFailed(ErrorCode.INTERNAL, "Error processing request")).get(0);

        assertThat(error.properties()).extracting(Map.Entry::getKey)
                .containsExactlyElementsOf(example.properties().stream().map(Map.Entry::getKey).toList());
        assertThat(error.get("message")).isEqualTo(example.get("message"));
    }

    @Test
    void stepEventsMatchTheProfileExamples() {
        assertThat(at(1705318201000L, new Event.StepStarted("thinking"))).containsExactly(fixtureJson("step_started.json"));
        assertThat(at(1705318202000L, new Event.StepFinished("thinking"))).containsExactly(fixtureJson("step_finished.json"));
    }

    @Test
    void startingAStepFinishesTheOpenOneFirst() {
        assertThat(types(encode(new Event.StepStarted("routing"), new Event.StepStarted("thinking"),
                new Event.StepStarted("thinking"))))
                .containsExactly("STEP_STARTED:routing", "STEP_FINISHED:routing", "STEP_STARTED:thinking",
                        "STEP_FINISHED:thinking", "STEP_STARTED:thinking");
    }

    @Test
    void stepFinishedIsSentOnlyForTheOpenStep() {
        assertThat(types(encode(new Event.StepStarted("routing"), new Event.StepFinished("thinking"),
                new Event.StepFinished("routing"), new Event.StepFinished("routing"))))
                .containsExactly("STEP_STARTED:routing", "STEP_FINISHED:routing");
    }

    @Test
    void textMessageEventsMatchTheProfileExamples() {
        assertThat(at(1705318202000L, new Event.MessageStarted("msg-789-...", Role.ASSISTANT)))
                .containsExactly(fixtureJson("text_message_start.json"));
        assertThat(at(1705318202100L, new Event.TextDelta("msg-789-...", "Based on the regulations, ")))
                .containsExactly(fixtureJson("text_message_content.json"));
        assertThat(at(1705318204000L, new Event.MessageCompleted("msg-789-...", "Based on the regulations, ", List.of())))
                .containsExactly(fixtureJson("text_message_end.json"));
    }

    @Test
    void textDeltaOfAMessageNotStartedStartsItAsAnAssistantMessage() {
        assertThat(types(encode(new Event.TextDelta("m1", "Hi"), new Event.TextDelta("m1", " there"),
                new Event.MessageCompleted("m1", "Hi there", List.of()))))
                .containsExactly("TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END");
    }

    @Test
    void deltasOfAlternatingMessagesEachNameTheirOwn() {
        List<JsonNode> frames = encode(new Event.TextDelta("m1", "a"), new Event.TextDelta("m2", "b"),
                new Event.TextDelta("m1", "c"));

        assertThat(frames).filteredOn(f -> f.get("type").textValue().equals("TEXT_MESSAGE_CONTENT"))
                .extracting(f -> f.get("messageId").textValue() + ":" + f.get("delta").textValue())
                .containsExactly("m1:a", "m2:b", "m1:c");
        assertThat(types(frames)).containsExactly("TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_START",
                "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT");
    }

    @Test
    void aDeltaAfterItsMessageCompletedOpensTheMessageAgain() {
        assertThat(types(encode(new Event.TextDelta("m1", "a"), new Event.MessageCompleted("m1", "a", List.of()),
                new Event.TextDelta("m1", "b"))))
                .containsExactly("TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT");
    }

    @Test
    void aDeltaAfterItsRunFinishedOpensItsMessageAgain() {
        encode(new Event.RunStarted(null), new Event.TextDelta("m1", "a"), new Event.RunFinished());

        assertThat(types(encode(new Event.TextDelta("m1", "b"))))
                .containsExactly("TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT");
    }

    @Test
    void messageCompletedWithoutDeltasSendsTheWholeTextOnce() {
        List<JsonNode> frames = encode(new Event.MessageCompleted("m1", "Whole answer", List.of()));

        assertThat(types(frames)).containsExactly("TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END");
        assertThat(frames.get(1).get("delta").textValue()).isEqualTo("Whole answer");
    }

    @Test
    void emptyMessageIsSentWithoutAnEmptyDelta() {
        assertThat(types(encode(new Event.MessageStarted("m1", Role.ASSISTANT),
                new Event.MessageCompleted("m1", "", List.of()))))
                .containsExactly("TEXT_MESSAGE_START", "TEXT_MESSAGE_END");
        assertThat(types(encode(new Event.MessageCompleted("m2", "", List.of()))))
                .containsExactly("TEXT_MESSAGE_START", "TEXT_MESSAGE_END");
    }

    @Test
    void messageRolesAreTheirWireNamesAndToolOutputStreamsAsAssistant() {
        assertThat(encode(new Event.MessageStarted("m1", Role.USER), new Event.MessageStarted("m2", Role.SYSTEM),
                new Event.MessageStarted("m3", Role.DEVELOPER), new Event.MessageStarted("m4", Role.TOOL)))
                .extracting(f -> f.get("role").textValue())
                .containsExactly("user", "system", "developer", "assistant");
    }

    @Test
    void secondStartOfAnOpenMessageIsNotSent() {
        assertThat(types(encode(new Event.MessageStarted("m1", Role.ASSISTANT),
                new Event.MessageStarted("m1", Role.ASSISTANT)))).containsExactly("TEXT_MESSAGE_START");
    }

    @Test
    void toolCallEventsMatchTheProfileExamples() {
        assertThat(at(1705318202000L, new Event.ToolCallStarted("call-abc-...", "search_regulations", "msg-789-...")))
                .containsExactly(fixtureJson("tool_call_start.json"));
        assertThat(at(1705318202100L, new Event.ToolCallArgs("call-abc-...", "{\"query\": \"food safety\", \"limit\": 10}")))
                .containsExactly(fixtureJson("tool_call_args.json"));
        assertThat(at(1705318203000L, new Event.ToolCallCompleted("call-abc-...", "search_regulations",
                json("{\"query\":\"food safety\",\"limit\":10}")))).containsExactly(fixtureJson("tool_call_end.json"));
        assertThat(at(1705318203100L, new Event.ToolResult("call-abc-...", "search_regulations",
                json("{\"query\":\"food safety\",\"limit\":10}"), true, "Found 5 relevant regulations", "tool-result-abc")))
                .containsExactly(fixtureJson("tool_call_result.json"));
    }

    @Test
    void toolCallStartWithoutParentMessageOmitsIt() {
        assertThat(encode(new Event.ToolCallStarted("c1", "search", null))).singleElement()
                .satisfies(f -> assertThat(f.has("parentMessageId")).isFalse());
    }

    @Test
    void failedToolResultIsAToolCallResultWithTheReason() {
        assertThat(encode(new Event.ToolResult("c1", "lookup", null, false, "Database connection timeout", "m9")))
                .singleElement().satisfies(f -> {
                    assertThat(f.get("type").textValue()).isEqualTo("TOOL_CALL_RESULT");
                    assertThat(f.get("content").textValue()).isEqualTo("Database connection timeout");
                    assertThat(f.get("role").textValue()).isEqualTo("tool");
                });
    }

    @Test
    void toolResultOfAnOpenToolCallEndsItFirst() {
        assertThat(types(encode(new Event.ToolCallStarted("c1", "search", null), new Event.ToolCallArgs("c1", "{}"),
                new Event.ToolResult("c1", "search", null, true, "ok", "m9"))))
                .containsExactly("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT");
    }

    @Test
    void toolCallNotSeenStartingIsSentWholeWhenCompleted() {
        List<JsonNode> frames = encode(new Event.ToolCallArgs("c1", "{\"q\":"),
                new Event.ToolCallCompleted("c1", "search", json("{\"q\":\"food\"}")));

        assertThat(types(frames)).containsExactly("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END");
        assertThat(frames.get(0).get("toolCallName").textValue()).isEqualTo("search");
        assertThat(json(frames.get(1).get("delta").textValue())).isEqualTo(json("{\"q\":\"food\"}"));
    }

    @Test
    void approvalRequestedIsTheProfileCustomEventNamingItsToolCall() {
        ObjectNode expected = (ObjectNode) fixtureJson("tool_approval_request.json");
        ((ObjectNode) expected.get("value")).put("toolCallId", "call-7");

        assertThat(at(1705318202000L, new Event.ApprovalRequested("appr-xyz789", "call-7", "generate_final_report",
                "Generates an official inspection report PDF", json("{\"inspectionId\":\"INS-2024-001\"}"),
                "User requested to finalize the inspection report", RiskLevel.HIGH))).containsExactly(expected);
    }

    @Test
    void approvalResolvedSendsNothing() {
        assertThat(encode(new Event.ApprovalResolved("appr-1", true, "ok", "alice"))).isEmpty();
    }

    @Test
    void stateEventsMatchTheProfileExamples() {
        JsonNode snapshot = fixtureJson("state_snapshot.json");
        JsonNode delta = fixtureJson("state_delta.json");

        assertThat(at(1705318200000L, new Event.StateSnapshot(snapshot.get("snapshot")))).containsExactly(snapshot);
        assertThat(at(1705318201000L, new Event.StateDelta(delta.get("delta")))).containsExactly(delta);
    }

    @Test
    void customEventPassesItsNameAndValueThrough() {
        assertThat(at(1705318201000L, new Event.Custom("agora:agent_changed", json("{\"agent\":\"reporting-agent\"}"))))
                .containsExactly(json("""
                        {"type":"CUSTOM","name":"agora:agent_changed","value":{"agent":"reporting-agent"},
                         "timestamp":1705318201000}"""));
    }

    @Test
    void customEventWithoutAValueSendsJsonNullBecauseValueIsRequired() {
        assertThat(ws.encodeAt(1705318201000L, THREAD, RUN, new Event.Custom("ping", null)))
                .containsExactly(json("{\"type\":\"CUSTOM\",\"name\":\"ping\",\"value\":null,\"timestamp\":1705318201000}"));
    }

    @Test
    void reasoningIsSentOnTheWebSocketToo() {
        List<JsonNode> frames = ws.encode("thread-1", "run-1", new Event.ReasoningStarted("r1"),
                new Event.ReasoningDelta("r1", "Thinking"), new Event.ReasoningCompleted("r1", "Thinking"));

        assertThat(types(frames)).containsExactly("REASONING_START", "REASONING_MESSAGE_START",
                "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "REASONING_END");
    }

    @Test
    void reasoningNotSeenStartingIsSentWholeWhenCompleted() {
        assertThat(ws.encode("thread-1", "run-1", new Event.ReasoningCompleted("r1", "All of it")))
                .extracting(f -> f.path("type").asText() + ":" + f.path("delta").asText())
                .containsExactly("REASONING_START:", "REASONING_MESSAGE_START:", "REASONING_MESSAGE_CONTENT:All of it",
                        "REASONING_MESSAGE_END:", "REASONING_END:");
    }

    @Test
    void usageIsOnRunFinished() {
        ws.encode("thread-1", "run-1", new Event.RunStarted(null), new Event.Usage("m", 3, 4, null, null));

        List<JsonNode> end = ws.encode("thread-1", "run-1", new Event.RunFinished());
        assertThat(end.get(end.size() - 1).get("usage")).isEqualTo(json("""
                [{"model":"m","inputTokens":3,"outputTokens":4,"totalTokens":7}]"""));
    }

    @ParameterizedTest(name = "{0} model calls")
    @CsvSource({"2, 32, 13", "3, 41, 17"})
    void usageOfModelCallsWithoutTokenDetailsIsSummedOnRunFinished(int calls, long input, long output) {
        ws.encode("thread-1", "run-1", new Event.RunStarted(null));
        ws.encode("thread-1", "run-1", callsWithoutTokenDetails(calls));

        List<JsonNode> end = ws.encode("thread-1", "run-1", new Event.RunFinished());
        assertThat(end.get(end.size() - 1).get("usage")).isEqualTo(json("""
                [{"model":"local","inputTokens":%d,"outputTokens":%d,"totalTokens":%d}]"""
                .formatted(input, output, input + output)));
    }

    @Test
    void usageOfModelCallsWithoutTokenDetailsIsSummedOnRunError() {
        ws.encode("thread-1", "run-1", new Event.RunStarted(null));
        ws.encode("thread-1", "run-1", callsWithoutTokenDetails(2));

        List<JsonNode> end = ws.encode("thread-1", "run-1", new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, "gone"));
        assertThat(end).filteredOn(f -> f.path("type").asText().equals("RUN_ERROR")).singleElement()
                .extracting(f -> f.get("usage")).isEqualTo(json("""
                        [{"model":"local","inputTokens":32,"outputTokens":13,"totalTokens":45}]"""));
    }

    @Test
    void runEndClosesWhatIsOpenBeforeTheFinalSnapshot() {
        List<JsonNode> frames = encode(new Event.RunStarted(null), new Event.StepStarted("executing_tools"),
                new Event.MessageStarted("m1", Role.ASSISTANT), new Event.ToolCallStarted("c1", "search", "m1"),
                new Event.RunFinished());

        assertThat(types(frames)).containsExactly("RUN_STARTED", "STATE_SNAPSHOT:processing",
                "STEP_STARTED:executing_tools", "TEXT_MESSAGE_START", "TOOL_CALL_START",
                "TOOL_CALL_END", "TEXT_MESSAGE_END", "STEP_FINISHED:executing_tools",
                "STATE_SNAPSHOT:completed", "RUN_FINISHED");
    }

    @Test
    void runFailureClosesTheOpenStepAndMessageBeforeRunError() {
        List<JsonNode> frames = encode(new Event.RunStarted(null), new Event.StepStarted("thinking"),
                new Event.TextDelta("m1", "Let me"), new Event.RunFailed(ErrorCode.INTERNAL, "crashed"));

        assertThat(types(frames)).containsExactly("RUN_STARTED", "STATE_SNAPSHOT:processing", "STEP_STARTED:thinking",
                "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "STEP_FINISHED:thinking",
                "RUN_ERROR", "RUN_FINISHED");
    }

    @Test
    void runStateIsKeptPerRunAndForgottenWhenTheRunEnds() {
        ws.encode(THREAD, "run-a", new Event.RunStarted(null), new Event.StepStarted("thinking"));
        ws.encode(THREAD, "run-b", new Event.RunStarted(null), new Event.StepStarted("routing"));

        assertThat(types(ws.encode(THREAD, "run-a", new Event.RunFinished())))
                .containsExactly("STEP_FINISHED:thinking", "STATE_SNAPSHOT:completed", "RUN_FINISHED");
        assertThat(types(ws.encode(THREAD, "run-a", new Event.StepStarted("thinking"))))
                .containsExactly("STEP_STARTED:thinking");
        assertThat(types(ws.encode(THREAD, "run-b", new Event.RunFinished())))
                .containsExactly("STEP_FINISHED:routing", "STATE_SNAPSHOT:completed", "RUN_FINISHED");
    }

    @Test
    void runEndOfARunJoinedMidwayUsesItsOwnIds() {
        assertThat(ws.encode("t9", "run-9", new Event.RunFinished())).last().satisfies(f -> {
            assertThat(f.get("threadId").textValue()).isEqualTo("t9");
            assertThat(f.get("runId").textValue()).isEqualTo("run-9");
        });
    }

    @Test
    void errorWithDetailsMatchesTheProfileAgoraErrorExample() {
        List<JsonNode> frames = ws.encodeError(new GatewayError(ErrorCode.MODERATION,
                "Your message contains prohibited content", Map.of("reason", "profanity")));

        ObjectNode expected = (ObjectNode) fixtureJson("agora_error.json");
        expected.put("timestamp", AguiTesting.NOW);
        assertThat(frames).containsExactly(expected);
    }

    @Test
    void errorWithoutDetailsOmitsThem() {
        assertThat(ws.encodeError(GatewayError.of(ErrorCode.BUSY, "a run is already active"))).containsExactly(json("""
                {"type":"CUSTOM","name":"agora:error",
                 "value":{"errorCode":"run_in_progress","message":"a run is already active"},
                 "timestamp":1705318209999}"""));
    }

    @Test
    void fieldErrorNamesTheField() {
        List<JsonNode> frames = ws.encodeError(GatewayError.field(ErrorCode.MISSING_FIELD, "threadId", "threadId is required"));

        assertWellFormed(frames);
        assertThat(frames.get(0).get("value")).isEqualTo(json("""
                {"errorCode":"validation_error","message":"threadId is required","details":{"field":"threadId"}}"""));
    }

    @Test
    void nestedStateIsWrittenVerbatim() {
        JsonNode state = json("""
                {"filters":{"region":["NL","BE"],"since":2020,"exact":true,"score":0.5},
                 "text":"caf\\u00e9 \\"quoted\\" \\ud83d\\ude00"}""");

        assertThat(encode(new Event.StateSnapshot(state))).singleElement()
                .satisfies(f -> assertThat(f.get("snapshot")).isEqualTo(state));
    }
}
