package dev.switchboard.runtime.agui;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Event;
import dev.switchboard.core.Json;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.ApprovalRequest;
import dev.switchboard.core.testing.RecordingRunContext;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AguiUpstreamEventsTest {
    private final RecordingRunContext ctx = new RecordingRunContext();
    private final AguiUpstreamEvents events = new AguiUpstreamEvents(ctx);

    private static JsonNode json(String text) {
        try {
            return Json.MAPPER.readTree(text);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Feeds events, one JSON object a line (an indented line continues the one before); returns the last outcome. */
    private AguiUpstreamEvents.Outcome feed(String lines) throws AguiUpstreamEvents.Refused {
        AguiUpstreamEvents.Outcome last = null;
        for (String line : lines.strip().split("\n(?! )")) {
            last = events.onEvent(json(line));
        }
        return last;
    }

    @Test
    void aTextRunIsItsStepsAndMessageAndFinishes() throws Exception {
        AguiUpstreamEvents.Outcome outcome = feed("""
                {"type":"RUN_STARTED","threadId":"t","runId":"r"}
                {"type":"STEP_STARTED","stepName":"thinking"}
                {"type":"STEP_FINISHED","stepName":"thinking"}
                {"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}
                {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Keep it "}
                {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":""}
                {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"cold."}
                {"type":"TEXT_MESSAGE_END","messageId":"m1"}
                {"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success"}}""");

        assertThat(outcome).isEqualTo(new AguiUpstreamEvents.Outcome.Finished());
        assertThat(ctx.events()).containsExactly(new Event.StepStarted("thinking"), new Event.StepFinished("thinking"),
                new Event.MessageStarted("m1", Role.ASSISTANT), new Event.TextDelta("m1", "Keep it "),
                new Event.TextDelta("m1", "cold."), new Event.MessageCompleted("m1", "Keep it cold.", List.of()));
        assertThat(events.messages()).extracting(m -> m.id() + ":" + m.content()).containsExactly("m1:Keep it cold.");
    }

    @Test
    void aToolCallAndItsResultKeepTheirIdsAndName() throws Exception {
        feed("""
                {"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"search","parentMessageId":"m0"}
                {"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\\"q\\":"}
                {"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"\\"food\\"}"}
                {"type":"TOOL_CALL_END","toolCallId":"c1"}
                {"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":"Found 5","role":"tool"}""");

        JsonNode args = Json.object().put("q", "food");
        assertThat(ctx.events()).containsExactly(new Event.ToolCallStarted("c1", "search", "m0"),
                new Event.ToolCallArgs("c1", "{\"q\":"), new Event.ToolCallArgs("c1", "\"food\"}"),
                new Event.ToolCallCompleted("c1", "search", args),
                new Event.ToolResult("c1", "search", args, true, "Found 5", "t1"));
        assertThat(events.messages()).extracting(m -> m.role() + ":" + m.id()).containsExactly("ASSISTANT:c1", "TOOL:t1");
    }

    @Test
    void chunksOpenTheirMessageOrCallAndCloseAtTheNextOtherEvent() throws Exception {
        feed("""
                {"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","role":"assistant","delta":"Hel"}
                {"type":"TEXT_MESSAGE_CHUNK","delta":"lo"}
                {"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"f","delta":"{}"}
                {"type":"REASONING_MESSAGE_CHUNK","messageId":"r1","delta":"hm"}
                {"type":"STEP_STARTED","stepName":"s"}""");

        assertThat(ctx.events()).containsExactly(new Event.MessageStarted("m1", Role.ASSISTANT),
                new Event.TextDelta("m1", "Hel"), new Event.TextDelta("m1", "lo"),
                new Event.MessageCompleted("m1", "Hello", List.of()), new Event.ToolCallStarted("c1", "f", null),
                new Event.ToolCallArgs("c1", "{}"), new Event.ToolCallCompleted("c1", "f", Json.object()),
                new Event.ReasoningStarted("r1"), new Event.ReasoningDelta("r1", "hm"),
                new Event.ReasoningCompleted("r1", "hm"), new Event.StepStarted("s"));
    }

    @Test
    void reasoningMessagesAreReasoningEventsAndTheirSpanAndEncryptedValueAreNot() throws Exception {
        feed("""
                {"type":"REASONING_START","messageId":"span"}
                {"type":"REASONING_MESSAGE_START","messageId":"r1","role":"reasoning"}
                {"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"Because"}
                {"type":"REASONING_MESSAGE_END","messageId":"r1"}
                {"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"r1","encryptedValue":"xyz"}
                {"type":"REASONING_END","messageId":"span"}""");

        assertThat(ctx.events()).containsExactly(new Event.ReasoningStarted("r1"), new Event.ReasoningDelta("r1", "Because"),
                new Event.ReasoningCompleted("r1", "Because"));
    }

    @Test
    void stateAndCustomEventsPassThroughAndTheRestAreNamedCustomEvents() throws Exception {
        feed("""
                {"type":"STATE_SNAPSHOT","snapshot":{"a":1}}
                {"type":"STATE_SNAPSHOT","snapshot":[1]}
                {"type":"STATE_DELTA","delta":[{"op":"add","path":"/b","value":2}]}
                {"type":"CUSTOM","name":"progress","value":50}
                {"type":"ACTIVITY_SNAPSHOT","messageId":"a1","activityType":"plan","content":{"x":1},"timestamp":5}
                {"type":"RAW","event":{"k":"v"},"source":"lg"}
                {"type":"SUBAGENT_STARTED","subagentRunId":"s1","name":"helper"}
                {"type":"MESSAGES_SNAPSHOT","messages":[]}
                {"type":"SOMETHING_NEWER","x":1}""");

        assertThat(ctx.events()).containsExactly(new Event.StateSnapshot(json("{\"a\":1}")),
                new Event.Custom("ag-ui:state_snapshot", json("[1]")),
                new Event.StateDelta(json("[{\"op\":\"add\",\"path\":\"/b\",\"value\":2}]")),
                new Event.Custom("progress", json("50")),
                new Event.Custom("ag-ui:activity_snapshot", json("{\"messageId\":\"a1\",\"activityType\":\"plan\",\"content\":{\"x\":1}}")),
                new Event.Custom("ag-ui:raw", json("{\"event\":{\"k\":\"v\"},\"source\":\"lg\"}")),
                new Event.Custom("ag-ui:subagent_started", json("{\"subagentRunId\":\"s1\",\"name\":\"helper\"}")));
    }

    @Test
    void runFinishedClosesWhatIsOpenAndReportsUsage() throws Exception {
        AguiUpstreamEvents.Outcome outcome = feed("""
                {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi"}
                {"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f"}
                {"type":"RUN_FINISHED","threadId":"t","runId":"r","usage":[{"provider":"openai","model":"gpt-x","inputTokens":9,"outputTokens":3,"totalTokens":12,"reasoningTokens":1}]}""");

        assertThat(outcome).isEqualTo(new AguiUpstreamEvents.Outcome.Finished());
        assertThat(ctx.events()).endsWith(new Event.MessageCompleted("m1", "Hi", List.of()),
                new Event.ToolCallCompleted("c1", "f", Json.object()), new Event.Usage("gpt-x", 9, 3, 1L, null));
    }

    @Test
    void runErrorAndCancelledAreOutcomes() throws Exception {
        assertThat(feed("{\"type\":\"RUN_ERROR\",\"message\":\"boom\",\"code\":\"internal_error\"}"))
                .isEqualTo(new AguiUpstreamEvents.Outcome.Failed("boom", "internal_error"));
        assertThat(feed("{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\",\"outcome\":{\"type\":\"cancelled\"}}"))
                .isEqualTo(new AguiUpstreamEvents.Outcome.Cancelled());
    }

    @Test
    void theGatewaysOwnInterruptIsAnApprovalWithItsToolNameArgumentsReasoningAndRisk() throws Exception {
        AguiUpstreamEvents.Outcome outcome = feed("""
                {"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[
                  {"id":"appr-1","reason":"tool_call","message":"Generates a report","toolCallId":"call-9",
                   "metadata":{"toolName":"generate_report","parameters":{"id":"INS-1"},"reasoning":"asked","riskLevel":"critical"}}]}}""");

        JsonNode interrupt = ((AguiUpstreamEvents.Outcome.Interrupted) outcome).interrupts().get(0);
        assertThat(events.approvalFor(interrupt)).isEqualTo(new ApprovalRequest("call-9", "generate_report",
                "Generates a report", json("{\"id\":\"INS-1\"}"), "asked", RiskLevel.CRITICAL));
    }

    @Test
    void anotherAgentsInterruptTakesItsToolFromTheStreamOrItsReason() throws Exception {
        AguiUpstreamEvents.Outcome outcome = feed("""
                {"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"delete_files"}
                {"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\\"path\\":\\"/tmp\\"}"}
                {"type":"TOOL_CALL_END","toolCallId":"c1"}
                {"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[
                  {"id":"i1","reason":"confirm","toolCallId":"c1"},{"id":"i2","reason":"need_budget"}]}}""");

        List<JsonNode> interrupts = ((AguiUpstreamEvents.Outcome.Interrupted) outcome).interrupts();
        assertThat(events.approvalFor(interrupts.get(0))).isEqualTo(new ApprovalRequest("c1", "delete_files", null,
                json("{\"path\":\"/tmp\"}"), null, RiskLevel.HIGH));
        assertThat(events.approvalFor(interrupts.get(1))).isEqualTo(new ApprovalRequest("i2", "need_budget", null,
                Json.object(), null, RiskLevel.HIGH));
    }

    @Test
    void eventsThatBreakTheProtocolAreRefusedSayingWhy() {
        assertThatThrownBy(() -> feed("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"x\"}"))
                .isInstanceOf(AguiUpstreamEvents.Refused.class)
                .hasMessageStartingWith("the AG-UI agent sent TEXT_MESSAGE_CONTENT without messageId");
        assertThatThrownBy(() -> feed("{\"delta\":\"x\"}")).hasMessageStartingWith("the AG-UI agent sent an event without type");
        assertThatThrownBy(() -> feed("{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\",\"outcome\":{\"type\":\"interrupt\",\"interrupts\":[]}}"))
                .hasMessage("the AG-UI agent sent RUN_FINISHED with an interrupt outcome but no interrupts");
        assertThatThrownBy(() -> feed("{\"type\":\"STATE_DELTA\",\"delta\":{}}"))
                .hasMessage("the AG-UI agent sent a STATE_DELTA whose delta is not a JSON Patch array");
    }
}
