package dev.switchboard.adapter.agui;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Citation;
import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.Decoded;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.switchboard.adapter.agui.AguiTesting.assertWellFormed;
import static dev.switchboard.adapter.agui.AguiTesting.types;
import static dev.switchboard.testkit.Fixtures.fixture;
import static dev.switchboard.testkit.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whole runs as the hub emits them, on the AGORA WebSocket (checked against the profile's
 * "Conversation Flows") and on the official HTTP transport (checked against the official verifier).
 */
class AguiFlowTest {
    private static final String THREAD = "thread-1";
    private static final Citation CITATION =
            new Citation("c1", "regulation", "Food storage rules", "https://example.org/food", 3);
    private static final JsonNode REPORT_ARGS = json("{\"inspection_id\":\"INS-2024-001\"}");

    private static final Event[] BASIC = {
        new Event.RunStarted(null),
        new Event.StepStarted("routing"),
        new Event.StepFinished("routing"),
        new Event.StepStarted("thinking"),
        new Event.MessageStarted("msg_1", Role.ASSISTANT),
        new Event.TextDelta("msg_1", "Based on the regulations, "),
        new Event.TextDelta("msg_1", "you must keep chilled food at 8 °C."),
        new Event.MessageCompleted("msg_1", "Based on the regulations, you must keep chilled food at 8 °C.",
                List.of(CITATION)),
        new Event.StepFinished("thinking"),
        new Event.RunFinished(),
    };

    private static final Event[] TOOL = {
        new Event.RunStarted(null),
        new Event.StepStarted("routing"),
        new Event.StepFinished("routing"),
        new Event.StepStarted("thinking"),
        new Event.StepFinished("thinking"),
        new Event.StepStarted("executing_tools"),
        new Event.ToolCallStarted("call_1", "search_regulations", null),
        new Event.ToolCallArgs("call_1", "{\"query\":"),
        new Event.ToolCallArgs("call_1", "\"food safety\"}"),
        new Event.ToolCallCompleted("call_1", "search_regulations", json("{\"query\":\"food safety\"}")),
        new Event.ToolResult("call_1", "search_regulations", json("{\"query\":\"food safety\"}"), true,
                "Found 5 relevant regulations", "msg_tool_1"),
        new Event.StepFinished("executing_tools"),
        new Event.StepStarted("thinking"),
        new Event.MessageStarted("msg_2", Role.ASSISTANT),
        new Event.TextDelta("msg_2", "I found 5 relevant regulations."),
        new Event.MessageCompleted("msg_2", "I found 5 relevant regulations.", List.of()),
        new Event.StepFinished("thinking"),
        new Event.RunFinished(),
    };

    private static final Event[] ASKS_APPROVAL = {
        new Event.RunStarted(null),
        new Event.StepStarted("thinking"),
        new Event.StepFinished("thinking"),
        new Event.ApprovalRequested("appr_1", "call_9", "generate_inspection_report",
                "Generates official PDF inspection report", REPORT_ARGS,
                "User requested to finalize the inspection report", RiskLevel.HIGH),
    };

    private static final Event[] APPROVED = {
        new Event.ApprovalResolved("appr_1", true, "Go ahead", "anonymous"),
        new Event.StepStarted("executing_tools"),
        new Event.ToolCallStarted("call_9", "generate_inspection_report", null),
        new Event.ToolCallArgs("call_9", REPORT_ARGS.toString()),
        new Event.ToolCallCompleted("call_9", "generate_inspection_report", REPORT_ARGS),
        new Event.ToolResult("call_9", "generate_inspection_report", REPORT_ARGS, true,
                "Report INS-2024-001 stored as RPT-INS-2024-001.pdf", "msg_tool_9"),
        new Event.StepFinished("executing_tools"),
        new Event.MessageStarted("msg_3", Role.ASSISTANT),
        new Event.TextDelta("msg_3", "The report was generated."),
        new Event.MessageCompleted("msg_3", "The report was generated.", List.of(CITATION)),
        new Event.RunFinished(),
    };

    private static final Event[] CRASH = {
        new Event.RunStarted(null),
        new Event.StepStarted("thinking"),
        new Event.MessageStarted("msg_4", Role.ASSISTANT),
        new Event.TextDelta("msg_4", "Let me look into "),
        new Event.TextDelta("msg_4", "that for you"),
        new Event.RunFailed(ErrorCode.INTERNAL, "the demo agent crashed"),
    };

    private static String runIdOf(Decoded decoded) {
        assertThat(decoded).isInstanceOf(Decoded.Commands.class);
        return ((Command.StartRun) ((Decoded.Commands) decoded).commands().get(0)).runId();
    }

    /** The frames one HTTP exchange writes for these core events, checked like the official client would. */
    private static List<JsonNode> httpStream(AguiTesting http, String coreRunId, Event... events) {
        List<JsonNode> frames = http.encode(THREAD, coreRunId, events);
        assertWellFormed(frames);
        assertThat(OfficialVerifier.violations(frames)).isEmpty();
        assertThat(http.exchange().done()).isTrue();
        return frames;
    }

    // ---- AGORA WebSocket --------------------------------------------------------------------

    @Test
    void basicTextResponseOnTheWebSocketFollowsProfileFlowOne() {
        AguiTesting ws = AguiTesting.ws();
        String runId = runIdOf(ws.decode(fixture("run_agent_input.json")));

        List<JsonNode> frames = ws.encode("abc123-...", runId, BASIC);

        assertWellFormed(frames);
        assertThat(types(frames)).containsExactly("RUN_STARTED", "STATE_SNAPSHOT:processing",
                "STEP_STARTED:routing", "STEP_FINISHED:routing", "STEP_STARTED:thinking",
                "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                "STEP_FINISHED:thinking", "STATE_SNAPSHOT:completed", "RUN_FINISHED");
        assertThat(frames).filteredOn(f -> f.has("runId")).allSatisfy(f -> {
            assertThat(f.get("threadId").textValue()).isEqualTo("abc123-...");
            assertThat(f.get("runId").textValue()).isEqualTo("run-456-...");
        });
        assertThat(frames.get(frames.size() - 2).get("snapshot")).isEqualTo(json(
                "{\"threadId\":\"abc123-...\",\"runId\":\"run-456-...\",\"status\":\"completed\"}"));
    }

    @Test
    void toolExecutionOnTheWebSocketFollowsProfileFlowTwo() {
        AguiTesting ws = AguiTesting.ws();

        List<JsonNode> frames = ws.encode(THREAD, "run-1", TOOL);

        assertWellFormed(frames);
        assertThat(types(frames)).containsExactly("RUN_STARTED", "STATE_SNAPSHOT:processing",
                "STEP_STARTED:routing", "STEP_FINISHED:routing", "STEP_STARTED:thinking", "STEP_FINISHED:thinking",
                "STEP_STARTED:executing_tools", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_ARGS",
                "TOOL_CALL_END", "TOOL_CALL_RESULT", "STEP_FINISHED:executing_tools",
                "STEP_STARTED:thinking", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                "STEP_FINISHED:thinking", "STATE_SNAPSHOT:completed", "RUN_FINISHED");
        assertThat(frames.get(8).get("delta").textValue() + frames.get(9).get("delta").textValue())
                .isEqualTo("{\"query\":\"food safety\"}");
    }

    @Test
    void approvalOnTheWebSocketIsACustomRequestAnsweredByACustomResponse() {
        AguiTesting ws = AguiTesting.ws();

        List<JsonNode> asked = ws.encode(THREAD, "run-1", ASKS_APPROVAL);
        Decoded answer = ws.decode("""
                {"type":"CUSTOM","name":"agora:tool_approval_response",
                 "value":{"approvalId":"appr_1","approved":true,"feedback":"Go ahead"}}""");
        List<JsonNode> after = ws.encode(THREAD, "run-1", APPROVED);

        assertWellFormed(asked);
        assertWellFormed(after);
        assertThat(types(asked)).containsExactly("RUN_STARTED", "STATE_SNAPSHOT:processing",
                "STEP_STARTED:thinking", "STEP_FINISHED:thinking", "CUSTOM:agora:tool_approval_request");
        assertThat(asked.get(4).get("value").get("approvalId").textValue()).isEqualTo("appr_1");
        assertThat(answer).isEqualTo(Decoded.of(new Command.DecideApproval("appr_1", true, "Go ahead", null)));
        assertThat(types(after)).containsExactly("STEP_STARTED:executing_tools", "TOOL_CALL_START", "TOOL_CALL_ARGS",
                "TOOL_CALL_END", "TOOL_CALL_RESULT", "STEP_FINISHED:executing_tools",
                "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                "STATE_SNAPSHOT:completed", "RUN_FINISHED");
    }

    @Test
    void crashOnTheWebSocketSendsRunErrorThenRunFinishedAsProfileFlowThree() {
        AguiTesting ws = AguiTesting.ws();

        List<JsonNode> frames = ws.encode(THREAD, "run-1", CRASH);

        assertWellFormed(frames);
        assertThat(types(frames)).containsExactly("RUN_STARTED", "STATE_SNAPSHOT:processing", "STEP_STARTED:thinking",
                "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                "STEP_FINISHED:thinking", "RUN_ERROR", "RUN_FINISHED");
        assertThat(frames.get(8)).isEqualTo(json("""
                {"type":"RUN_ERROR","message":"the demo agent crashed","code":"internal_error","timestamp":1705318200600}"""));
    }

    // ---- official HTTP ------------------------------------------------------------------------

    @Test
    void basicTextResponseOverHttpIsOneVerifiedRunEndingInSuccess() {
        AguiTesting http = AguiTesting.http();
        String runId = runIdOf(http.decode(fixture("official_run_agent_input.json")));

        List<JsonNode> frames = httpStream(http, runId, BASIC);

        assertThat(types(frames)).containsExactly("RUN_STARTED", "STATE_SNAPSHOT",
                "STEP_STARTED:routing", "STEP_FINISHED:routing", "STEP_STARTED:thinking",
                "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                "STEP_FINISHED:thinking", "RUN_FINISHED:success");
        assertThat(frames.get(0)).isEqualTo(json("""
                {"type":"RUN_STARTED","threadId":"thread-1","runId":"run-2","parentRunId":"run-1",
                 "timestamp":1705318200100}"""));
        assertThat(frames.get(1).get("snapshot")).isEqualTo(json("{\"inspectionId\":\"INS-2024-001\",\"step\":3}"));
    }

    @Test
    void toolExecutionOverHttpIsOneVerifiedRun() {
        AguiTesting http = AguiTesting.http();
        String runId = runIdOf(http.decode(
                "{\"threadId\":\"thread-1\",\"runId\":\"run-1\",\"messages\":[{\"id\":\"m1\",\"role\":\"user\",\"content\":\"search\"}]}"));

        List<JsonNode> frames = httpStream(http, runId, TOOL);

        assertThat(types(frames)).containsExactly("RUN_STARTED",
                "STEP_STARTED:routing", "STEP_FINISHED:routing", "STEP_STARTED:thinking", "STEP_FINISHED:thinking",
                "STEP_STARTED:executing_tools", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_ARGS",
                "TOOL_CALL_END", "TOOL_CALL_RESULT", "STEP_FINISHED:executing_tools",
                "STEP_STARTED:thinking", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                "STEP_FINISHED:thinking", "RUN_FINISHED:success");
    }

    @Test
    void approvalOverHttpEndsTheRunWithAnInterruptThatTheNextRunResumes() {
        AguiTesting first = AguiTesting.http();
        String coreRunId = runIdOf(first.decode("""
                {"threadId":"thread-1","runId":"run-1",
                 "messages":[{"id":"m1","role":"user","content":"Generate the final inspection report"}]}"""));

        List<JsonNode> interrupted = httpStream(first, coreRunId, ASKS_APPROVAL);

        assertThat(types(interrupted)).containsExactly("RUN_STARTED", "STEP_STARTED:thinking",
                "STEP_FINISHED:thinking", "RUN_FINISHED:interrupt");
        JsonNode interrupt = interrupted.get(3).get("outcome").get("interrupts").get(0);
        assertThat(interrupt.get("id").textValue()).isEqualTo("appr_1");
        assertThat(interrupt.get("toolCallId").textValue()).isEqualTo("call_9");

        // The official client answers every pending interrupt in the next run's resume[].
        AguiTesting second = AguiTesting.http();
        Decoded resumed = second.decode("""
                {"threadId":"thread-1","runId":"run-2","state":{},"tools":[],"context":[],"forwardedProps":{},
                 "messages":[{"id":"m1","role":"user","content":"Generate the final inspection report"}],
                 "resume":[{"interruptId":"%s","status":"resolved","payload":{"approved":true,"feedback":"Go ahead"}}]}"""
                .formatted(interrupt.get("id").textValue()));

        assertThat(resumed).isEqualTo(Decoded.of(new Command.Subscribe("thread-1", -1, false),
                new Command.Resume("thread-1", List.of(new Command.DecideApproval("appr_1", true, "Go ahead",
                        json("{\"approved\":true,\"feedback\":\"Go ahead\"}"))))));

        List<JsonNode> continued = httpStream(second, coreRunId, APPROVED);

        assertThat(types(continued)).containsExactly("RUN_STARTED", "STATE_SNAPSHOT",
                "STEP_STARTED:executing_tools", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
                "STEP_FINISHED:executing_tools", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                "RUN_FINISHED:success");
        assertThat(continued).filteredOn(f -> f.has("runId"))
                .allSatisfy(f -> assertThat(f.get("runId").textValue()).isEqualTo("run-2"));
    }

    @Test
    void crashOverHttpIsRunErrorWithNothingAfterIt() {
        AguiTesting http = AguiTesting.http();
        String runId = runIdOf(http.decode(
                "{\"threadId\":\"thread-1\",\"runId\":\"run-1\",\"messages\":[{\"id\":\"m1\",\"role\":\"user\",\"content\":\"crash\"}]}"));

        List<JsonNode> frames = httpStream(http, runId, CRASH);

        assertThat(types(frames)).containsExactly("RUN_STARTED", "STEP_STARTED:thinking",
                "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "RUN_ERROR");
        assertThat(http.encode(THREAD, runId, new Event.RunFinished())).isEmpty();
    }
}
