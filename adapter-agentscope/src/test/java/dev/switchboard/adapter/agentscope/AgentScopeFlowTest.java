package dev.switchboard.adapter.agentscope;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.Decoded;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.switchboard.adapter.agentscope.AgentScopeTesting.assertWellFormed;
import static dev.switchboard.adapter.agentscope.AgentScopeTesting.assertWellFormedStream;
import static dev.switchboard.adapter.agentscope.AgentScopeTesting.runId;
import static dev.switchboard.adapter.agentscope.AgentScopeTesting.shapes;
import static dev.switchboard.testkit.Fixtures.fixture;
import static dev.switchboard.testkit.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whole requests as a reference client sees them: the body decoded, the run's core events encoded,
 * and the stream read back line by line from the {@code data: } events the gateway sends.
 */
class AgentScopeFlowTest {
    private static final String SESSION = "session-42";

    private static final String ASK = """
            {"input":[{"id":"msg_q","role":"user","content":[{"type":"text","text":"Is rule 4 met?"}]}],
             "session_id":"session-42"}""";

    @Test
    void basicFlowStreamsTheAnswerAndEndsWithTheResponseCompleted() {
        AgentScopeTesting http = new AgentScopeTesting();
        String run = runId(http.decode(ASK));

        http.encode(SESSION, run, new Event.RunStarted(null), new Event.StepStarted("thinking"),
                new Event.MessageStarted("m1", Role.ASSISTANT), new Event.TextDelta("m1", "Yes, "),
                new Event.TextDelta("m1", "it is."), new Event.MessageCompleted("m1", "Yes, it is.", List.of()),
                new Event.StepFinished("thinking"), new Event.RunFinished());

        List<JsonNode> events = http.events();
        assertWellFormedStream(events);
        assertThat(shapes(events)).containsExactly("response:created", "response:in_progress",
                "message(message):created", "content(text,delta):in_progress", "content(text,delta):in_progress",
                "content(text):completed", "message(message):completed", "response:completed");
        assertThat(events.subList(2, 7)).allSatisfy(e -> assertThat(e.path("id").isMissingNode()
                ? e.get("msg_id").textValue() : e.get("id").textValue()).isEqualTo("m1"));
        assertThat(events.get(5).get("text").textValue()).isEqualTo("Yes, it is.");
        JsonNode done = events.get(7);
        assertThat(done.get("output")).singleElement().isEqualTo(events.get(6));
        assertThat(done.get("session_id").textValue()).isEqualTo(SESSION);
        assertThat(done.get("id")).isEqualTo(events.get(0).get("id"));
        assertThat(http.exchange().done()).isTrue();
    }

    @Test
    void toolFlowShowsTheFunctionCallAndItsOutputBeforeTheAnswer() {
        AgentScopeTesting http = new AgentScopeTesting();
        String run = runId(http.decode(ASK));

        http.encode(SESSION, run, new Event.RunStarted(null), new Event.StepStarted("executing_tools"),
                new Event.ToolCallStarted("call-1", "search_regulations", null),
                new Event.ToolCallArgs("call-1", "{\"rule\":4}"),
                new Event.ToolCallCompleted("call-1", "search_regulations", json("{\"rule\":4}")),
                new Event.ToolResult("call-1", "search_regulations", json("{\"rule\":4}"), true,
                        "Rule 4: keep it cold.", "m-tool"),
                new Event.StepFinished("executing_tools"), new Event.MessageStarted("m2", Role.ASSISTANT),
                new Event.TextDelta("m2", "Keep it cold."),
                new Event.MessageCompleted("m2", "Keep it cold.", List.of()), new Event.RunFinished());

        List<JsonNode> events = http.events();
        assertWellFormedStream(events);
        assertThat(shapes(events)).containsExactly("response:created", "response:in_progress",
                "message(function_call):created", "content(data):completed", "message(function_call):completed",
                "message(function_call_output):created", "content(data):completed",
                "message(function_call_output):completed",
                "message(message):created", "content(text,delta):in_progress", "content(text):completed",
                "message(message):completed", "response:completed");
        assertThat(events.get(3).get("data")).isEqualTo(json("""
                {"call_id":"call-1","name":"search_regulations","arguments":"{\\"rule\\":4}"}"""));
        assertThat(events.get(3).get("msg_id")).isEqualTo(events.get(2).get("id"));
        assertThat(events.get(5).get("role").textValue()).isEqualTo("tool");
        assertThat(events.get(6).get("data")).isEqualTo(json("""
                {"call_id":"call-1","name":"search_regulations","output":"Rule 4: keep it cold."}"""));
        assertThat(events.get(12).get("output")).extracting(m -> m.get("type").textValue())
                .containsExactly("function_call", "function_call_output", "message");
    }

    @Test
    void approvalFlowEndsTheResponseAtTheRequestAndTheDecisionsResponseShowsTheRest() {
        AgentScopeTesting asking = new AgentScopeTesting();
        String run = runId(asking.decode(ASK));

        asking.encode(SESSION, run, new Event.RunStarted(null),
                new Event.ToolCallCompleted("call-1", "generate_inspection_report", json("{\"id\":\"INS-1\"}")),
                new Event.ApprovalRequested("appr-1", "call-1", "generate_inspection_report", "Generates the report",
                        json("{\"id\":\"INS-1\"}"), "asked to finalise", RiskLevel.HIGH));
        // The run waits in the gateway; nothing more belongs to this response.
        asking.encode(SESSION, run, new Event.ApprovalResolved("appr-1", true, null, "alice"), new Event.RunFinished());

        List<JsonNode> first = asking.events();
        assertWellFormedStream(first);
        assertThat(shapes(first)).containsExactly("response:created", "response:in_progress",
                "message(function_call):created", "content(data):completed", "message(function_call):completed",
                "message(mcp_approval_request):created", "content(data):completed",
                "message(mcp_approval_request):completed", "response:completed");
        JsonNode request = first.get(6).get("data");
        assertThat(request.get("id").textValue()).isEqualTo("appr-1");
        assertThat(first.get(8).get("output")).extracting(m -> m.get("type").textValue())
                .containsExactly("function_call", "mcp_approval_request");
        assertThat(asking.exchange().done()).isTrue();

        AgentScopeTesting deciding = new AgentScopeTesting();
        Decoded decoded = deciding.decode("""
                {"input":[{"type":"mcp_approval_response","role":"user","content":[{"type":"data",
                  "data":{"approval_request_id":"%s","approve":true}}]}],"session_id":"%s"}"""
                .formatted(request.get("id").textValue(), first.get(8).get("session_id").textValue()));
        assertThat(((Decoded.Commands) decoded).commands()).contains(
                new Command.DecideApproval("appr-1", true, null, json("{\"approval_request_id\":\"appr-1\",\"approve\":true}")));

        deciding.encode(SESSION, run, new Event.ApprovalResolved("appr-1", true, null, "alice"),
                new Event.ToolResult("call-1", "generate_inspection_report", json("{\"id\":\"INS-1\"}"), true,
                        "report.pdf", "m-tool"),
                new Event.MessageStarted("m2", Role.ASSISTANT), new Event.TextDelta("m2", "Done."),
                new Event.MessageCompleted("m2", "Done.", List.of()), new Event.RunFinished());

        List<JsonNode> second = deciding.events();
        assertWellFormedStream(second);
        assertThat(shapes(second)).containsExactly("response:created", "response:in_progress",
                "message(function_call_output):created", "content(data):completed",
                "message(function_call_output):completed", "message(message):created",
                "content(text,delta):in_progress", "content(text):completed", "message(message):completed",
                "response:completed");
        assertThat(second.get(0).get("id")).isNotEqualTo(first.get(0).get("id"));
        assertThat(second.get(9).get("session_id").textValue()).isEqualTo(SESSION);
    }

    @Test
    void aDecisionsResponseBeginsWhereItsApprovalIsResolvedAndLeavesOtherRunsOut() {
        AgentScopeTesting deciding = new AgentScopeTesting();
        deciding.decode(fixture("mcp_approval_response.json"));

        deciding.encode(SESSION, "run_other", new Event.MessageStarted("x", Role.ASSISTANT),
                new Event.ApprovalResolved("appr-other", true, null, "bob"), new Event.TextDelta("x", "elsewhere"));
        deciding.encode(SESSION, "run_waiting", new Event.ApprovalResolved("appr-1", true, "report looks right", "alice"),
                new Event.StepStarted("executing_tools"));
        deciding.encode(SESSION, "run_other", new Event.RunFinished());
        deciding.encode(SESSION, "run_waiting", new Event.RunFinished());

        List<JsonNode> events = deciding.events();
        assertWellFormedStream(events);
        assertThat(shapes(events)).containsExactly("response:created", "response:in_progress", "response:completed");
    }

    @Test
    void failureFlowEndsWithTheResponseFailedAndItsError() {
        AgentScopeTesting http = new AgentScopeTesting();
        String run = runId(http.decode(ASK));

        http.encode(SESSION, run, new Event.RunStarted(null), new Event.MessageStarted("m1", Role.ASSISTANT),
                new Event.TextDelta("m1", "Let me"), new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, "the model failed"),
                new Event.TextDelta("m1", " see"));

        List<JsonNode> events = http.events();
        assertWellFormedStream(events);
        assertThat(shapes(events)).containsExactly("response:created", "response:in_progress",
                "message(message):created", "content(text,delta):in_progress", "response:failed");
        assertThat(events.get(4).get("error")).isEqualTo(json("""
                {"code":"upstream_error","message":"the model failed"}"""));
        assertThat(http.exchange().done()).isTrue();
    }

    @Test
    void aStreamCutByAGatewayErrorEndsWithTheResponseFailed() {
        AgentScopeTesting http = new AgentScopeTesting();
        String run = runId(http.decode(ASK));

        http.encode(SESSION, run, new Event.RunStarted(null), new Event.TextDelta("m1", "Hi"));
        http.encodeError(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway is shutting down"));

        List<JsonNode> events = http.events();
        assertWellFormedStream(events);
        assertThat(shapes(events)).endsWith("response:failed");
    }

    @Test
    void nonStreamingRequestIsAnsweredWithOneAgentResponse() {
        AgentScopeTesting http = new AgentScopeTesting();
        String run = runId(http.decode("""
                {"input":[{"role":"user","content":"Is rule 4 met?"}],"session_id":"session-42","stream":false}"""));
        assertThat(http.exchange().streaming()).isFalse();

        List<JsonNode> frames = http.encode(SESSION, run, new Event.RunStarted(null),
                new Event.ToolCallCompleted("call-1", "search", json("{\"q\":\"rule 4\"}")),
                new Event.ToolResult("call-1", "search", json("{\"q\":\"rule 4\"}"), true, "found", "m-tool"),
                new Event.MessageStarted("m1", Role.ASSISTANT), new Event.TextDelta("m1", "Yes"),
                new Event.MessageCompleted("m1", "Yes", List.of()));
        assertThat(frames).isEmpty();
        assertThat(http.exchange().done()).isFalse();

        List<JsonNode> body = http.encode(SESSION, run, new Event.RunFinished());

        assertThat(body).singleElement().satisfies(response -> {
            assertWellFormed(response);
            assertThat(response.get("sequence_number").intValue()).isZero();
            assertThat(response.get("object").textValue()).isEqualTo("response");
            assertThat(response.get("status").textValue()).isEqualTo("completed");
            assertThat(response.get("session_id").textValue()).isEqualTo(SESSION);
            assertThat(response.get("created_at").longValue()).isEqualTo(1_705_318_200L);
            assertThat(response.get("completed_at").isIntegralNumber()).isTrue();
            assertThat(response.get("error").isNull()).isTrue();
            assertThat(response.get("output")).extracting(m -> m.get("type").textValue())
                    .containsExactly("function_call", "function_call_output", "message");
            assertThat(response.get("output").get(2).get("content").get(0).get("text").textValue()).isEqualTo("Yes");
            assertThat(response.get("output")).allSatisfy(m -> assertThat(m.get("sequence_number").isNull()).isTrue());
        });
        assertThat(http.exchange().done()).isTrue();
    }

    @Test
    void nonStreamingFailedRunIsOneAgentResponseFailed() {
        AgentScopeTesting http = new AgentScopeTesting();
        String run = runId(http.decode("""
                {"input":[{"role":"user","content":"hi"}],"session_id":"session-42","stream":false}"""));

        List<JsonNode> body = http.encode(SESSION, run, new Event.RunStarted(null),
                new Event.RunFailed(ErrorCode.TOOL_FAILED, "the search tool is down"));

        assertThat(body).singleElement().satisfies(response -> {
            assertWellFormed(response);
            assertThat(response.get("status").textValue()).isEqualTo("failed");
            assertThat(response.get("error")).isEqualTo(json("""
                    {"code":"tool_execution_failed","message":"the search tool is down"}"""));
            assertThat(response.get("sequence_number").intValue()).isZero();
        });
    }

    @Test
    void nonStreamingErrorIsTheErrorBodyEvenAfterTheRunBegan() {
        AgentScopeTesting http = new AgentScopeTesting();
        String run = runId(http.decode("""
                {"input":[{"role":"user","content":"hi"}],"session_id":"session-42","stream":false}"""));
        http.encode(SESSION, run, new Event.RunStarted(null), new Event.TextDelta("m1", "partial"));

        assertThat(http.encodeError(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway is shutting down")))
                .containsExactly(json("""
                        {"error":{"code":"unavailable","message":"the gateway is shutting down"}}"""));
        assertThat(http.exchange().done()).isTrue();
    }

    @Test
    void aRefusedRequestIsAnsweredWithTheErrorBody() {
        AgentScopeTesting http = new AgentScopeTesting();
        GatewayError error = ((Decoded.Failure) http.decode("{\"input\":42}")).error();

        assertThat(http.encodeError(error)).containsExactly(json("""
                {"error":{"code":"validation_error",
                          "message":"input must be a list of messages, or a string (one user message)",
                          "details":{"field":"input"}}}"""));
        assertThat(error.code().httpStatus()).isEqualTo(422);
    }

    @Test
    void aDecisionRefusedByTheGatewayIsAnsweredWithTheErrorBody() {
        AgentScopeTesting http = new AgentScopeTesting();
        http.decode(fixture("mcp_approval_response.json"));

        assertThat(http.encodeError(GatewayError.field(ErrorCode.CONFLICT, "approval_id", "approval appr-1 was already decided")))
                .singleElement().satisfies(body -> assertThat(body.get("error").get("code").textValue())
                        .isEqualTo("already_decided"));
        assertThat(ErrorCode.CONFLICT.httpStatus()).isEqualTo(409);
    }

    @Test
    void theReferenceClientIgnoresLinesThatAreNotDataEvents() {
        List<JsonNode> events = AgentScopeTesting.readLikeTheReferenceClient(
                ": keep-alive\n\ndata:{\"no\":\"space\"}\n\ndata: {\"object\":\"response\"}\n\n");

        assertThat(events).containsExactly(json("{\"object\":\"response\"}"));
    }
}
