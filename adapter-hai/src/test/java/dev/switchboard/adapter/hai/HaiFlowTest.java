package dev.switchboard.adapter.hai;

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

import static dev.switchboard.testkit.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

/** Whole runs as the hub emits them, checked against the spec's "Conversation Flows". */
class HaiFlowTest {
    private static final String SESSION = "123e4567-e89b-12d3-a456-426614174000";
    private static final Citation CITATION =
            new Citation("c1", "regulation", "Food storage rules", "https://example.org/food", 3);

    private final HaiTesting hai = new HaiTesting();

    private static Event[] answer(String runId) {
        return new Event[] {
            new Event.RunStarted(null),
            new Event.StepStarted("thinking"),
            new Event.MessageStarted("msg_1", Role.ASSISTANT),
            new Event.TextDelta("msg_1", "Based on "),
            new Event.TextDelta("msg_1", "the regulations, "),
            new Event.TextDelta("msg_1", "you must maintain..."),
            new Event.MessageCompleted("msg_1", "Based on the regulations, you must maintain...", List.of(CITATION)),
            new Event.StepFinished("thinking"),
            new Event.RunFinished(),
        };
    }

    private static List<String> types(List<JsonNode> frames) {
        return frames.stream().map(f -> f.get("type").textValue()
                + (f.has("status") ? ":" + f.get("status").textValue() : "")
                + (f.has("is_final") ? ":" + (f.get("is_final").booleanValue() ? "final" : "partial") : ""))
                .toList();
    }

    private Command.StartRun startRun(String metadata) {
        Decoded decoded = hai.session().decode("{\"type\":\"user_message\",\"content\":\"What are food safety regs?\","
                + "\"session_id\":\"" + SESSION + "\"" + (metadata == null ? "" : ",\"metadata\":" + metadata) + "}");
        return (Command.StartRun) ((Decoded.Commands) decoded).commands().get(0);
    }

    @Test
    void basicQuestionAnswerStreamsThreeChunksAndOneFinalChunk() {
        String runId = startRun(null).runId();

        List<JsonNode> frames = hai.encode(SESSION, runId, answer(runId));

        assertThat(types(frames)).containsExactly("status:thinking",
                "assistant_message_chunk:partial", "assistant_message_chunk:partial", "assistant_message_chunk:partial",
                "assistant_message_chunk:final", "status:completed");
        List<JsonNode> chunks = frames.subList(1, 5);
        assertThat(chunks).allSatisfy(c -> {
            assertThat(c.get("message_id").textValue()).isEqualTo("msg_1");
            assertThat(c.get("session_id").textValue()).isEqualTo(SESSION);
        });
        assertThat(chunks.stream().map(c -> c.get("content").textValue()).reduce("", String::concat))
                .isEqualTo("Based on the regulations, you must maintain...");
        assertThat(chunks.subList(0, 3)).allSatisfy(c -> assertThat(c.has("metadata")).isFalse());
        assertThat(chunks.get(3).get("metadata")).isEqualTo(json("""
                {"citations":[{"id":"c1","source_type":"regulation","title":"Food storage rules",
                               "url":"https://example.org/food","page":3}]}"""));
    }

    @Test
    void nonStreamingRunSendsOneWholeAssistantMessage() {
        String runId = startRun("{\"stream\":false}").runId();

        List<JsonNode> frames = hai.encode(SESSION, runId, answer(runId));

        assertThat(types(frames)).containsExactly("status:thinking", "assistant_message", "status:completed");
        assertThat(frames.get(1)).isEqualTo(json("""
                {"type":"assistant_message","content":"Based on the regulations, you must maintain...",
                 "session_id":"123e4567-e89b-12d3-a456-426614174000",
                 "metadata":{"citations":[{"id":"c1","source_type":"regulation","title":"Food storage rules",
                                           "url":"https://example.org/food","page":3}]}}"""));
    }

    @Test
    void nonStreamingMessageWithoutCitationsOmitsMetadata() {
        String runId = startRun("{\"stream\":false}").runId();

        List<JsonNode> frames = hai.encode(SESSION, runId, new Event.RunStarted(null),
                new Event.TextDelta("m", "Hi"), new Event.MessageCompleted("m", "Hi", List.of()),
                new Event.RunFinished());

        assertThat(frames.get(1)).isEqualTo(json(
                "{\"type\":\"assistant_message\",\"content\":\"Hi\",\"session_id\":\"" + SESSION + "\"}"));
    }

    @Test
    void aRunsDeltasFollowItsStartWhateverDeltasCameBeforeIt() {
        String runId = startRun("{\"stream\":false}").runId();

        // A delta of a run this connection has not seen start streams, as one joined midway does...
        List<JsonNode> before = hai.encode(SESSION, runId, new Event.TextDelta("m", "a"));
        // ...and once its start says it wants whole messages, its deltas are held back.
        List<JsonNode> after = hai.encode(SESSION, runId, new Event.RunStarted(null), new Event.TextDelta("m", "b"),
                new Event.MessageCompleted("m", "ab", List.of()));

        assertThat(types(before)).containsExactly("assistant_message_chunk:partial");
        assertThat(types(after)).containsExactly("status:thinking", "assistant_message");
    }

    @Test
    void explicitStreamTrueStreams() {
        String runId = startRun("{\"stream\":true}").runId();

        assertThat(types(hai.encode(SESSION, runId, answer(runId)))).contains("assistant_message_chunk:final");
    }

    @Test
    void onlyTheNonStreamingRunIsBuffered() {
        String buffered = startRun("{\"stream\":false}").runId();
        hai.encode(SESSION, buffered, answer(buffered));

        List<JsonNode> later = hai.encode(SESSION, "run-from-elsewhere", answer("run-from-elsewhere"));

        assertThat(types(later)).containsExactly("status:thinking",
                "assistant_message_chunk:partial", "assistant_message_chunk:partial", "assistant_message_chunk:partial",
                "assistant_message_chunk:final", "status:completed");
    }

    @Test
    void startedNonStreamingRunStaysBufferedWhileLaterRequestsAreRefused() {
        String runId = startRun("{\"stream\":false}").runId();
        hai.encode(SESSION, runId, new Event.RunStarted(null));
        for (int i = 0; i < 100; i++) {
            startRun("{\"stream\":false}");
        }

        List<JsonNode> frames = hai.encode(SESSION, runId, new Event.TextDelta("m", "Hi"),
                new Event.MessageCompleted("m", "Hi", List.of()), new Event.RunFinished());

        assertThat(types(frames)).containsExactly("assistant_message", "status:completed");
    }

    @Test
    void anotherConnectionOnTheSameConversationStreamsTheNonStreamingRun() {
        String runId = startRun("{\"stream\":false}").runId();
        HaiTesting other = new HaiTesting();

        assertThat(types(other.encode(SESSION, runId, answer(runId)))).containsExactly("status:thinking",
                "assistant_message_chunk:partial", "assistant_message_chunk:partial", "assistant_message_chunk:partial",
                "assistant_message_chunk:final", "status:completed");
    }

    @Test
    void toolExecutionSendsRoutingToolsAndToolCallLifecycle() {
        String runId = startRun(null).runId();

        List<JsonNode> frames = hai.encode(SESSION, runId,
                new Event.RunStarted(null),
                new Event.StepStarted("routing"),
                new Event.StepStarted("executing_tools"),
                new Event.ToolCallStarted("call_abc123", "search_regulations", null),
                new Event.ToolCallArgs("call_abc123", "{\"query\":"),
                new Event.ToolCallArgs("call_abc123", "\"food safety\"}"),
                new Event.ToolCallCompleted("call_abc123", "search_regulations", json("{\"query\":\"food safety\"}")),
                new Event.ToolResult("call_abc123", "search_regulations", json("{\"query\":\"food safety\"}"), true,
                        "Found 5 docs", "msg_tool"),
                new Event.StepFinished("executing_tools"),
                new Event.MessageStarted("msg_2", Role.ASSISTANT),
                new Event.TextDelta("msg_2", "Here they are."),
                new Event.MessageCompleted("msg_2", "Here they are.", List.of()),
                new Event.RunFinished());

        assertThat(types(frames)).containsExactly("status:thinking", "status:routing", "status:executing_tools",
                "tool_call:started", "tool_call:completed",
                "assistant_message_chunk:partial", "assistant_message_chunk:final", "status:completed");
        assertThat(frames.get(3).get("parameters")).isEqualTo(json("{\"query\":\"food safety\"}"));
        assertThat(frames.get(3).has("result")).isFalse();
        assertThat(frames.get(4).get("result").textValue()).isEqualTo("Found 5 docs");
    }

    @Test
    void approvalFlowSendsTheRequestAndDecodesTheAnswer() {
        String runId = startRun(null).runId();

        List<JsonNode> asked = hai.encode(SESSION, runId,
                new Event.RunStarted(null),
                new Event.ApprovalRequested("appr_abc123", "call_1", "generate_inspection_report",
                        "Generates official PDF inspection report", json("{\"inspection_id\":\"INS-2024-001\"}"),
                        "User requested to finalize the inspection report", RiskLevel.HIGH));
        Decoded answer = hai.session().decode(
                "{\"type\":\"tool_approval_response\",\"approval_id\":\"appr_abc123\",\"approved\":true}");
        List<JsonNode> after = hai.encode(SESSION, runId,
                new Event.ApprovalResolved("appr_abc123", true, null, "anonymous"),
                new Event.ToolCallCompleted("call_1", "generate_inspection_report",
                        json("{\"inspection_id\":\"INS-2024-001\"}")),
                new Event.ToolResult("call_1", "generate_inspection_report",
                        json("{\"inspection_id\":\"INS-2024-001\"}"), true, "Report stored", "msg_tool"),
                new Event.TextDelta("msg_3", "Done."),
                new Event.MessageCompleted("msg_3", "Done.", List.of()),
                new Event.RunFinished());

        assertThat(types(asked)).containsExactly("status:thinking", "tool_approval_request");
        assertThat(asked.get(1).get("approval_id").textValue()).isEqualTo("appr_abc123");
        assertThat(answer).isEqualTo(Decoded.of(new Command.DecideApproval("appr_abc123", true, null, null)));
        assertThat(types(after)).containsExactly("tool_call:started", "tool_call:completed",
                "assistant_message_chunk:partial", "assistant_message_chunk:final", "status:completed");
    }

    @Test
    void failedRunSendsErrorThenCompletedStatus() {
        String runId = startRun(null).runId();

        List<JsonNode> frames = hai.encode(SESSION, runId,
                new Event.RunStarted(null),
                new Event.TextDelta("msg_1", "Partial"),
                new Event.RunFailed(ErrorCode.MODERATION, "Your message contains prohibited content"));

        assertThat(types(frames)).containsExactly("status:thinking", "assistant_message_chunk:partial", "error",
                "status:completed");
        assertThat(frames.get(2).get("error_code").textValue()).isEqualTo("moderation_violation");
        assertThat(frames.get(2).get("details")).isEqualTo(json(
                "{\"session_id\":\"" + SESSION + "\",\"run_id\":\"" + runId + "\"}"));
    }
}
