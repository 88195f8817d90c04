package dev.switchboard.adapter.agentscope;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Citation;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Json;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.Role;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static dev.switchboard.adapter.agentscope.AgentScopeTesting.assertWellFormed;
import static dev.switchboard.adapter.agentscope.AgentScopeTesting.runId;
import static dev.switchboard.adapter.agentscope.AgentScopeTesting.shapes;
import static dev.switchboard.testkit.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

/** Every core event as the reference runtime's objects, with every status they take. */
class AgentScopeExchangeTest {
    private static final String SESSION = "session-42";
    private static final String REQUEST = """
            {"input":[{"role":"user","content":"hi"}],"session_id":"session-42"}""";

    private final AgentScopeTesting http = new AgentScopeTesting();
    private String run;
    private String responseId;

    @BeforeEach
    void decodeTheRequest() {
        run = runId(http.decode(REQUEST));
    }

    private List<JsonNode> encode(Event... events) {
        List<JsonNode> frames = http.encode(SESSION, run, events);
        frames.forEach(AgentScopeTesting::assertWellFormed);
        return frames;
    }

    /** Encodes RunStarted and returns the frames of the events that follow. */
    private List<JsonNode> afterStart(Event... events) {
        responseId = encode(new Event.RunStarted(null)).get(0).get("id").textValue();
        return encode(events);
    }

    @Test
    void runStartedIsTheResponseCreatedThenInProgress() {
        List<JsonNode> frames = encode(new Event.RunStarted(null));
        String id = frames.get(0).get("id").textValue();

        assertThat(id).startsWith("response_");
        assertThat(frames).containsExactly(
                json("""
                        {"sequence_number":0,"object":"response","status":"created","error":null,"id":"%s",
                         "created_at":1705318200,"completed_at":null,"output":null,"usage":null,
                         "session_id":"session-42"}""".formatted(id)),
                json("""
                        {"sequence_number":1,"object":"response","status":"in_progress","error":null,"id":"%s",
                         "created_at":1705318200,"completed_at":null,"output":null,"usage":null,
                         "session_id":"session-42"}""".formatted(id)));
        assertThat(http.exchange().done()).isFalse();
    }

    @Test
    void keysAreWrittenInTheReferenceModelsOrder() {
        JsonNode created = encode(new Event.RunStarted(null)).get(0);

        assertThat(created.fieldNames()).toIterable().containsExactly("sequence_number", "object", "status", "error",
                "id", "created_at", "completed_at", "output", "usage", "session_id");
    }

    @Test
    void messageStartedIsAMessageCreatedWithoutContent() {
        assertThat(afterStart(new Event.MessageStarted("m1", Role.ASSISTANT))).containsExactly(json("""
                {"sequence_number":2,"object":"message","status":"created","error":null,"id":"m1","type":"message",
                 "role":"assistant","content":null,"code":null,"message":null,"usage":null,"metadata":null}"""));
    }

    @Test
    void textDeltaIsAnInProgressTextContentDeltaOfItsMessage() {
        afterStart(new Event.MessageStarted("m1", Role.ASSISTANT));

        assertThat(encode(new Event.TextDelta("m1", "Hel"))).containsExactly(json("""
                {"sequence_number":3,"object":"content","status":"in_progress","error":null,"type":"text","index":0,
                 "delta":true,"msg_id":"m1","text":"Hel"}"""));
    }

    @Test
    void aTextDeltaIsWrittenKeyForKeyAsTheTextContentModel() throws Exception {
        afterStart(new Event.MessageStarted("m1", Role.ASSISTANT));
        encode(new Event.TextDelta("m1", "Keep it at 8 °C, \"chilled\"\n"));

        String[] frames = http.sse().split("\n\n");
        String last = frames[frames.length - 1].substring("data: ".length());
        ObjectNode model = AgentScopeEvents.text("m1", 0, true, AgentScopeEvents.IN_PROGRESS,
                "Keep it at 8 °C, \"chilled\"\n");
        model.put(AgentScopeEvents.SEQUENCE_NUMBER, 3);
        assertThat(last).isEqualTo(Json.MAPPER.writeValueAsString(model));
    }

    @Test
    void messageCompletedIsTheWholeTextAsCompletedContentThenTheMessageCompleted() {
        afterStart(new Event.MessageStarted("m1", Role.ASSISTANT), new Event.TextDelta("m1", "Hel"),
                new Event.TextDelta("m1", "lo"));

        assertThat(encode(new Event.MessageCompleted("m1", "Hello", List.of()))).containsExactly(
                json("""
                        {"sequence_number":5,"object":"content","status":"completed","error":null,"type":"text",
                         "index":0,"delta":false,"msg_id":"m1","text":"Hello"}"""),
                json("""
                        {"sequence_number":6,"object":"message","status":"completed","error":null,"id":"m1",
                         "type":"message","role":"assistant",
                         "content":[{"sequence_number":null,"object":"content","status":"completed","error":null,
                                     "type":"text","index":0,"delta":false,"msg_id":"m1","text":"Hello"}],
                         "code":null,"message":null,"usage":null,"metadata":null}"""));
    }

    @Test
    void citationsGoInTheCompletedMessagesMetadata() {
        List<JsonNode> frames = afterStart(new Event.MessageCompleted("m1", "See rule 4.", List.of(
                new Citation("c1", "regulation", "Rule 4", "https://example.com/r4", 12),
                new Citation("c2", "guide", "Guide", "https://example.com/g", null))));

        assertThat(frames.get(frames.size() - 1).get("metadata")).isEqualTo(json("""
                {"citations":[{"id":"c1","source_type":"regulation","title":"Rule 4","url":"https://example.com/r4","page":12},
                              {"id":"c2","source_type":"guide","title":"Guide","url":"https://example.com/g","page":null}]}"""));
    }

    @Test
    void aMessageSeenOnlyWhenCompletedIsSentCreatedWithItsWholeTextAndCompleted() {
        assertThat(shapes(afterStart(new Event.MessageCompleted("m1", "Whole", List.of()))))
                .containsExactly("message(message):created", "content(text):completed", "message(message):completed");
    }

    @Test
    void aDeltaOfAMessageNotStartedStartsItAsTheAssistants() {
        List<JsonNode> frames = afterStart(new Event.TextDelta("m1", "Hi"));

        assertThat(shapes(frames)).containsExactly("message(message):created", "content(text,delta):in_progress");
        assertThat(frames.get(0).get("role").textValue()).isEqualTo("assistant");
    }

    @Test
    void aMessageWithoutTextCompletesWithNoContent() {
        List<JsonNode> frames = afterStart(new Event.MessageStarted("m1", Role.ASSISTANT),
                new Event.MessageCompleted("m1", "", List.of()));

        assertThat(shapes(frames)).containsExactly("message(message):created", "message(message):completed");
        assertThat(frames.get(1).get("content")).isEqualTo(json("[]"));
    }

    @Test
    void theDeveloperRoleIsWrittenAsSystem() {
        assertThat(afterStart(new Event.MessageStarted("m1", Role.DEVELOPER)).get(0).get("role").textValue())
                .isEqualTo("system");
    }

    @Test
    void toolCallCompletedIsAFunctionCallMessageWithItsDataPart() {
        List<JsonNode> frames = afterStart(new Event.ToolCallStarted("call-1", "search_regulations", null),
                new Event.ToolCallArgs("call-1", "{\"rule\":"), new Event.ToolCallArgs("call-1", "4}"),
                new Event.ToolCallCompleted("call-1", "search_regulations", json("{\"rule\":4}")));
        String id = frames.get(0).get("id").textValue();

        assertThat(id).startsWith("msg_");
        String data = """
                {"call_id":"call-1","name":"search_regulations","arguments":"{\\"rule\\":4}"}""";
        assertThat(frames).containsExactly(
                json("""
                        {"sequence_number":2,"object":"message","status":"created","error":null,"id":"%s",
                         "type":"function_call","role":"assistant","content":null,"code":null,"message":null,
                         "usage":null,"metadata":null}""".formatted(id)),
                json("""
                        {"sequence_number":3,"object":"content","status":"completed","error":null,"type":"data",
                         "index":0,"delta":false,"msg_id":"%s","data":%s}""".formatted(id, data)),
                json("""
                        {"sequence_number":4,"object":"message","status":"completed","error":null,"id":"%s",
                         "type":"function_call","role":"assistant",
                         "content":[{"sequence_number":null,"object":"content","status":"completed","error":null,
                                     "type":"data","index":0,"delta":false,"msg_id":"%s","data":%s}],
                         "code":null,"message":null,"usage":null,"metadata":null}""".formatted(id, id, data)));
        assertThat(json(frames.get(1).get("data").get("arguments").textValue())).isEqualTo(json("{\"rule\":4}"));
    }

    @Test
    void toolResultIsAFunctionCallOutputMessageOfTheToolRole() {
        List<JsonNode> frames = afterStart(new Event.ToolResult("call-1", "search_regulations", json("{\"rule\":4}"),
                true, "Rule 4: keep it cold.", "m-tool"));

        String data = """
                {"call_id":"call-1","name":"search_regulations","output":"Rule 4: keep it cold."}""";
        assertThat(frames).containsExactly(
                json("""
                        {"sequence_number":2,"object":"message","status":"created","error":null,"id":"m-tool",
                         "type":"function_call_output","role":"tool","content":null,"code":null,"message":null,
                         "usage":null,"metadata":null}"""),
                json("""
                        {"sequence_number":3,"object":"content","status":"completed","error":null,"type":"data",
                         "index":0,"delta":false,"msg_id":"m-tool","data":%s}""".formatted(data)),
                json("""
                        {"sequence_number":4,"object":"message","status":"completed","error":null,"id":"m-tool",
                         "type":"function_call_output","role":"tool",
                         "content":[{"sequence_number":null,"object":"content","status":"completed","error":null,
                                     "type":"data","index":0,"delta":false,"msg_id":"m-tool","data":%s}],
                         "code":null,"message":null,"usage":null,"metadata":null}""".formatted(data)));
    }

    @Test
    void aFailedToolsOutputIsWhyItFailed() {
        List<JsonNode> frames = afterStart(new Event.ToolResult("call-1", "search", null, false, "timed out", "m-tool"));

        assertThat(frames.get(1).get("data")).isEqualTo(json("""
                {"call_id":"call-1","name":"search","output":"timed out"}"""));
    }

    @Test
    void approvalRequestedIsAnMcpApprovalRequestAndEndsTheResponseCompleted() {
        List<JsonNode> frames = afterStart(new Event.ApprovalRequested("appr-1", "call-1", "generate_inspection_report",
                "Generates official PDF inspection report", json("{\"inspection_id\":\"INS-2024-001\"}"),
                "User asked to finalise", RiskLevel.HIGH));
        assertThat(shapes(frames)).containsExactly("message(mcp_approval_request):created", "content(data):completed",
                "message(mcp_approval_request):completed", "response:completed");
        assertThat(frames.get(0).get("role").textValue()).isEqualTo("assistant");
        assertThat(frames.get(1).get("data")).isEqualTo(json("""
                {"id":"appr-1","name":"generate_inspection_report","arguments":"{\\"inspection_id\\":\\"INS-2024-001\\"}",
                 "server_label":"switchboard"}"""));
        assertThat(frames.get(3)).isEqualTo(json("""
                {"sequence_number":5,"object":"response","status":"completed","error":null,"id":"%s",
                 "created_at":1705318200,"completed_at":1705318200,"output":[%s],"usage":null,
                 "session_id":"session-42"}""".formatted(responseId, frames.get(2))));
        assertThat(frames.get(0).get("id").textValue()).isEqualTo("appr-1");
        assertThat(http.exchange().done()).isTrue();
    }

    @Test
    void runFinishedIsTheResponseCompletedWithItsOutput() {
        List<JsonNode> messages = afterStart(new Event.MessageStarted("m1", Role.ASSISTANT),
                new Event.TextDelta("m1", "Hi"), new Event.MessageCompleted("m1", "Hi", List.of()));

        List<JsonNode> frames = encode(new Event.RunFinished());

        assertThat(frames).containsExactly(json("""
                {"sequence_number":6,"object":"response","status":"completed","error":null,"id":"%s",
                 "created_at":1705318200,"completed_at":1705318200,"output":[%s],"usage":null,
                 "session_id":"session-42"}""".formatted(responseId, messages.get(3))));
        assertThat(http.exchange().done()).isTrue();
    }

    @Test
    void usageOfEveryModelCallIsSummedIntoTheFinalResponse() {
        afterStart(new Event.Usage("gpt-x", 100, 20, null, null), new Event.Usage("gpt-x", 30, 5, 3L, null));

        assertThat(encode(new Event.RunFinished()).get(0).get("usage")).isEqualTo(json("""
                {"input_tokens":130,"output_tokens":25,"total_tokens":155}"""));
    }

    @ParameterizedTest(name = "{0} model calls")
    @CsvSource({"2, 32, 13", "3, 41, 17"})
    void usageOfModelCallsWithoutTokenDetailsIsSummedIntoTheFinalResponse(int calls, long input, long output) {
        Event.Usage[] local = {new Event.Usage("local", 20, 7, null, null), new Event.Usage("local", 12, 6, null, null),
                new Event.Usage("local", 9, 4, null, null)};
        afterStart(Arrays.copyOf(local, calls));

        assertThat(encode(new Event.RunFinished()).get(0).get("usage")).isEqualTo(json("""
                {"input_tokens":%d,"output_tokens":%d,"total_tokens":%d}""".formatted(input, output, input + output)));
    }

    @Test
    void reasoningHasNoAgentScopeMessageAndSendsNothing() {
        afterStart();

        assertThat(encode(new Event.ReasoningStarted("r1"), new Event.ReasoningDelta("r1", "hmm"),
                new Event.ReasoningCompleted("r1", "hmm"), new Event.Usage("m", 1, 1, null, null))).isEmpty();
    }

    @Test
    void runFailedIsTheResponseFailedWithItsError() {
        afterStart();

        assertThat(encode(new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, "the model timed out"))).containsExactly(json("""
                {"sequence_number":2,"object":"response","status":"failed",
                 "error":{"code":"upstream_error","message":"the model timed out"},"id":"%s",
                 "created_at":1705318200,"completed_at":1705318200,"output":[],"usage":null,
                 "session_id":"session-42"}""".formatted(responseId)));
        assertThat(http.exchange().done()).isTrue();
    }

    @Test
    void aCancelledRunIsTheResponseCanceled() {
        List<JsonNode> frames = afterStart(new Event.RunFailed(ErrorCode.CANCELLED, null));

        assertThat(frames.get(0).get("status").textValue()).isEqualTo("canceled");
        assertThat(frames.get(0).get("error")).isEqualTo(json("""
                {"code":"cancelled","message":"the run was cancelled"}"""));
    }

    @Test
    void theResponseTimesAreTheEventTimesInWholeSeconds() {
        http.encode(SESSION, run, new Event.RunStarted(null));
        List<JsonNode> frames = http.encode(SESSION, run, new Event.StepStarted("a"), new Event.StepStarted("b"),
                new Event.StepStarted("c"), new Event.StepStarted("d"), new Event.StepStarted("e"),
                new Event.StepStarted("f"), new Event.StepStarted("g"), new Event.StepStarted("h"),
                new Event.StepStarted("i"), new Event.RunFinished());

        assertThat(frames.get(0).get("created_at").longValue()).isEqualTo(1_705_318_200L);
        assertThat(frames.get(0).get("completed_at").longValue()).isEqualTo(1_705_318_201L);
    }

    @Test
    void eventsWithoutAnAgentScopeObjectWriteNothing() {
        assertThat(afterStart(new Event.StepStarted("thinking"), new Event.StepFinished("thinking"),
                new Event.StateSnapshot(json("{\"a\":1}")), new Event.StateDelta(json("[]")),
                new Event.Custom("progress", json("{\"pct\":50}")),
                new Event.ApprovalResolved("appr-1", true, null, "alice"),
                new Event.ToolCallStarted("c1", "t", null), new Event.ToolCallArgs("c1", "{}"),
                new Event.RunStarted(null))).isEmpty();
    }

    @Test
    void aFirstEventOtherThanRunStartedIsPrecededByTheResponseCreatedAndInProgress() {
        assertThat(shapes(encode(new Event.ApprovalResolved("appr-1", true, null, "alice"),
                new Event.MessageStarted("m1", Role.ASSISTANT))))
                .containsExactly("response:created", "response:in_progress", "message(message):created");
    }

    @Test
    void theResponseEndsWithTheOpenMessagesCompletedWithTheTextSoFar() {
        List<JsonNode> frames = afterStart(new Event.MessageStarted("m1", Role.ASSISTANT),
                new Event.TextDelta("m1", "Part"), new Event.TextDelta("m1", "ial"), new Event.RunFinished());

        assertThat(shapes(frames)).containsExactly("message(message):created", "content(text,delta):in_progress",
                "content(text,delta):in_progress", "content(text):completed", "message(message):completed",
                "response:completed");
        assertThat(frames.get(3).get("text").textValue()).isEqualTo("Partial");
        assertThat(frames.get(5).get("output")).hasSize(1);
    }

    @Test
    void eventsOfOtherRunsOfTheSessionAreNotPartOfTheResponse() {
        assertThat(http.encode(SESSION, "run_other", new Event.ApprovalRequested("appr-0", "call-0", "old", null,
                null, null, RiskLevel.LOW))).isEmpty();

        List<JsonNode> frames = http.encode(SESSION, run, new Event.RunStarted(null));
        frames.addAll(http.encode(SESSION, "run_other", new Event.MessageStarted("x", Role.ASSISTANT)));
        frames.addAll(http.encode(SESSION, run, new Event.RunFinished()));

        assertThat(shapes(frames)).containsExactly("response:created", "response:in_progress", "response:completed");
    }

    @Test
    void nothingIsSentAfterTheFinalResponse() {
        afterStart(new Event.RunFinished());

        assertThat(encode(new Event.RunStarted(null), new Event.TextDelta("m1", "late"), new Event.RunFinished()))
                .isEmpty();
        assertThat(http.encodeError(GatewayError.of(ErrorCode.INTERNAL, "late"))).isEmpty();
    }

    @Test
    void onlyTheFirstApprovalOfARunIsSent() {
        afterStart(new Event.ApprovalRequested("appr-1", "call-1", "a", null, null, null, RiskLevel.LOW));

        assertThat(encode(new Event.ApprovalRequested("appr-2", "call-2", "b", null, null, null, RiskLevel.LOW)))
                .isEmpty();
    }

    @Test
    void anErrorBeforeAnyFrameIsTheWholeErrorBody() {
        List<JsonNode> frames = http.encodeError(new GatewayError(ErrorCode.BUSY,
                "a run is already active in conversation session-42", Map.of("run_id", "run-0")));

        assertThat(frames).containsExactly(json("""
                {"error":{"code":"run_in_progress","message":"a run is already active in conversation session-42",
                          "details":{"run_id":"run-0"}}}"""));
        assertThat(http.exchange().done()).isTrue();
        assertThat(http.encode(SESSION, run, new Event.RunStarted(null))).isEmpty();
    }

    @Test
    void anErrorBodyWithoutDetailsHasNone() {
        assertThat(new AgentScopeTesting().encodeError(GatewayError.of(ErrorCode.INVALID_JSON, "not JSON")))
                .containsExactly(json("{\"error\":{\"code\":\"invalid_json\",\"message\":\"not JSON\"}}"));
    }

    @Test
    void anErrorAfterTheFirstFrameIsTheResponseFailed() {
        afterStart(new Event.MessageCompleted("m1", "Hi", List.of()));

        List<JsonNode> frames = http.encodeError(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway is shutting down"));

        assertThat(frames).singleElement().satisfies(f -> {
            assertWellFormed(f);
            assertThat(f.get("sequence_number").intValue()).isEqualTo(5);
            assertThat(f.get("status").textValue()).isEqualTo("failed");
            assertThat(f.get("error")).isEqualTo(json("""
                    {"code":"unavailable","message":"the gateway is shutting down"}"""));
            assertThat(f.get("completed_at").longValue()).isEqualTo(AgentScopeTesting.NOW / 1000);
            assertThat(f.get("output")).hasSize(1);
        });
        assertThat(http.exchange().done()).isTrue();
    }

    @Test
    void textWithLineBreaksStaysOneServerSentEvent() {
        afterStart(new Event.TextDelta("m1", "line one\nline two\r\n\n"));

        assertThat(http.sse().split("\n\n", -1)).hasSize(5);
        assertThat(http.events().get(3).get("text").textValue()).isEqualTo("line one\nline two\r\n\n");
    }

    @ParameterizedTest
    @EnumSource(ErrorCode.class)
    void everyErrorCodeHasASnakeCaseCode(ErrorCode code) {
        assertThat(code.wireCode()).matches("[a-z]+(_[a-z]+)*");
    }

    @Test
    void errorCodesAreTheGatewaysCodesInTheirSnakeCaseNames() {
        assertThat(ErrorCode.MISSING_FIELD.wireCode()).isEqualTo("validation_error");
        assertThat(ErrorCode.INVALID_FIELD.wireCode()).isEqualTo("validation_error");
        assertThat(ErrorCode.CONFLICT.wireCode()).isEqualTo("already_decided");
        assertThat(ErrorCode.RATE_LIMITED.wireCode()).isEqualTo("rate_limit_exceeded");
        assertThat(ErrorCode.MODERATION.wireCode()).isEqualTo("moderation_violation");
        assertThat(ErrorCode.TOOL_FAILED.wireCode()).isEqualTo("tool_execution_failed");
        assertThat(ErrorCode.UPSTREAM_FAILED.wireCode()).isEqualTo("upstream_error");
        assertThat(ErrorCode.BUSY.wireCode()).isEqualTo("run_in_progress");
        assertThat(ErrorCode.AUTH_FAILED.wireCode()).isEqualTo("auth_failed");
    }
}
