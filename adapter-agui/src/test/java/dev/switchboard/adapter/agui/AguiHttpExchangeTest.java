package dev.switchboard.adapter.agui;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.Decoded;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.switchboard.adapter.agui.AguiTesting.assertWellFormed;
import static dev.switchboard.adapter.agui.AguiTesting.callsWithoutTokenDetails;
import static dev.switchboard.adapter.agui.AguiTesting.types;
import static dev.switchboard.testkit.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

/** Every core event on the official 1.0 HTTP transport, and the ordering rules its client enforces. */
class AguiHttpExchangeTest {
    private static final String INPUT = """
            {"threadId":"thread-1","runId":"run-1","messages":[{"id":"m1","role":"user","content":"hi"}]}""";

    private final AguiTesting http = AguiTesting.http();
    private final List<JsonNode> stream = new ArrayList<>();

    @BeforeEach
    void decodeTheRequest() {
        http.decode(INPUT);
    }

    /** Encodes events of core run {@code run-1} and returns the frames they add to the stream. */
    private List<JsonNode> encode(Event... events) {
        List<JsonNode> frames = http.encode("thread-1", "run-1", events);
        assertWellFormed(frames);
        stream.addAll(frames);
        return frames;
    }

    private void assertTheOfficialClientAcceptsTheStream() {
        assertThat(OfficialVerifier.violations(stream)).isEmpty();
    }

    @Test
    void answerIsAStreamOfServerSentEvents() {
        assertThat(http.exchange().streaming()).isTrue();
        assertThat(http.exchange().done()).isFalse();
    }

    @Test
    void runStartedCarriesTheInputsIdsAndNoProfileSnapshot() {
        assertThat(encode(new Event.RunStarted(null))).containsExactly(json("""
                {"type":"RUN_STARTED","threadId":"thread-1","runId":"run-1","timestamp":1705318200100}"""));
    }

    @Test
    void runStartedIsFollowedByTheInputsStateAndNamesTheInputsParentRun() {
        AguiTesting withState = AguiTesting.http();
        withState.decode("""
                {"threadId":"thread-1","runId":"run-2","parentRunId":"run-1","state":{"step":3},
                 "messages":[{"id":"m1","role":"user","content":"hi"}]}""");

        assertThat(withState.encode("thread-1", "run-2", new Event.RunStarted(null))).containsExactly(
                json("""
                        {"type":"RUN_STARTED","threadId":"thread-1","runId":"run-2","parentRunId":"run-1",
                         "timestamp":1705318200100}"""),
                json("{\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{\"step\":3},\"timestamp\":1705318200100}"));
    }

    @Test
    void runFinishedHasTheSuccessOutcomeAndEndsTheStream() {
        encode(new Event.RunStarted(null));

        assertThat(encode(new Event.RunFinished())).containsExactly(json("""
                {"type":"RUN_FINISHED","threadId":"thread-1","runId":"run-1","outcome":{"type":"success"},
                 "timestamp":1705318200200}"""));
        assertThat(http.exchange().done()).isTrue();
        assertTheOfficialClientAcceptsTheStream();
    }

    @Test
    void runFailedIsRunErrorAndEndsTheStream() {
        encode(new Event.RunStarted(null));

        assertThat(encode(new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, "the model timed out"))).containsExactly(json("""
                {"type":"RUN_ERROR","message":"the model timed out","code":"upstream_error","timestamp":1705318200200}"""));
        assertThat(http.exchange().done()).isTrue();
        assertTheOfficialClientAcceptsTheStream();
    }

    @Test
    void nothingIsSentAfterRunError() {
        encode(new Event.RunStarted(null), new Event.StepStarted("thinking"), new Event.TextDelta("m1", "Let"),
                new Event.RunFailed(ErrorCode.INTERNAL, "crashed"));

        assertThat(encode(new Event.TextDelta("m1", " me"), new Event.RunFinished())).isEmpty();
        assertThat(http.encodeError(GatewayError.of(ErrorCode.INTERNAL, "late"))).isEmpty();
        assertThat(types(stream)).endsWith("RUN_ERROR");
        assertTheOfficialClientAcceptsTheStream();
    }

    @Test
    void nothingIsSentAfterRunFinished() {
        encode(new Event.RunStarted(null), new Event.RunFinished());

        assertThat(encode(new Event.RunStarted(null), new Event.StepStarted("thinking"), new Event.RunFinished()))
                .isEmpty();
        assertTheOfficialClientAcceptsTheStream();
    }

    @Test
    void stepTextAndToolCallEventsAreTheProfilesEvents() {
        List<JsonNode> frames = encode(new Event.RunStarted(null), new Event.StepStarted("executing_tools"),
                new Event.ToolCallStarted("c1", "search_regulations", null),
                new Event.ToolCallArgs("c1", "{\"query\":\"food\"}"),
                new Event.ToolCallCompleted("c1", "search_regulations", json("{\"query\":\"food\"}")),
                new Event.ToolResult("c1", "search_regulations", json("{\"query\":\"food\"}"), true, "Found 5", "m-tool"),
                new Event.StepFinished("executing_tools"),
                new Event.MessageStarted("m2", Role.ASSISTANT), new Event.TextDelta("m2", "Here."),
                new Event.MessageCompleted("m2", "Here.", List.of()), new Event.RunFinished());

        assertThat(types(frames)).containsExactly("RUN_STARTED", "STEP_STARTED:executing_tools", "TOOL_CALL_START",
                "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT", "STEP_FINISHED:executing_tools",
                "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED:success");
        assertThat(frames.get(5)).isEqualTo(json("""
                {"type":"TOOL_CALL_RESULT","messageId":"m-tool","toolCallId":"c1","content":"Found 5","role":"tool",
                 "timestamp":1705318200600}"""));
        assertTheOfficialClientAcceptsTheStream();
    }

    @Test
    void stateAndCustomEventsAreTheProfilesEvents() {
        List<JsonNode> frames = encode(new Event.RunStarted(null), new Event.StateSnapshot(json("{\"a\":1}")),
                new Event.StateDelta(json("[{\"op\":\"add\",\"path\":\"/b\",\"value\":2}]")),
                new Event.Custom("progress", json("{\"pct\":50}")));

        assertThat(frames.subList(1, 4)).containsExactly(
                json("{\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{\"a\":1},\"timestamp\":1705318200200}"),
                json("{\"type\":\"STATE_DELTA\",\"delta\":[{\"op\":\"add\",\"path\":\"/b\",\"value\":2}],"
                        + "\"timestamp\":1705318200300}"),
                json("{\"type\":\"CUSTOM\",\"name\":\"progress\",\"value\":{\"pct\":50},\"timestamp\":1705318200400}"));
    }

    @Test
    void runFinishedClosesTheOpenToolCallMessageAndStepFirst() {
        encode(new Event.RunStarted(null), new Event.StepStarted("thinking"),
                new Event.MessageStarted("m1", Role.ASSISTANT), new Event.TextDelta("m1", "Partial"),
                new Event.ToolCallStarted("c1", "search", "m1"));

        assertThat(types(encode(new Event.RunFinished()))).containsExactly("TOOL_CALL_END", "TEXT_MESSAGE_END",
                "STEP_FINISHED:thinking", "RUN_FINISHED:success");
        assertTheOfficialClientAcceptsTheStream();
    }

    @Test
    void reasoningIsASpanHoldingOneReasoningMessage() {
        List<JsonNode> frames = encode(new Event.RunStarted(null), new Event.ReasoningStarted("r1"),
                new Event.ReasoningDelta("r1", "The user wants "), new Event.ReasoningDelta("r1", "the rules."),
                new Event.ReasoningCompleted("r1", "The user wants the rules."), new Event.RunFinished());

        assertThat(types(frames)).containsExactly("RUN_STARTED", "REASONING_START", "REASONING_MESSAGE_START",
                "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "REASONING_END",
                "RUN_FINISHED:success");
        assertThat(frames.get(2)).isEqualTo(json("""
                {"type":"REASONING_MESSAGE_START","messageId":"r1","role":"reasoning","timestamp":1705318200200}"""));
        assertThat(frames.get(3)).isEqualTo(json("""
                {"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"The user wants ","timestamp":1705318200300}"""));
        assertTheOfficialClientAcceptsTheStream();
    }

    @Test
    void reasoningStillOpenIsClosedBeforeRunFinished() {
        encode(new Event.RunStarted(null), new Event.ReasoningDelta("r1", "Hmm"));

        assertThat(types(encode(new Event.RunFinished()))).containsExactly("REASONING_MESSAGE_END", "REASONING_END",
                "RUN_FINISHED:success");
        assertTheOfficialClientAcceptsTheStream();
    }

    @Test
    void usageIsSummedPerModelOnRunFinished() {
        encode(new Event.RunStarted(null), new Event.Usage("gpt-x", 100, 20, null, 64L),
                new Event.Usage("gpt-x", 130, 5, 2L, null), new Event.Usage("small", 7, 1, null, null));

        assertThat(encode(new Event.RunFinished()).get(0).get("usage")).isEqualTo(json("""
                [{"model":"gpt-x","inputTokens":230,"outputTokens":25,"totalTokens":255,"reasoningTokens":2,
                  "cachedInputTokens":64},
                 {"model":"small","inputTokens":7,"outputTokens":1,"totalTokens":8}]"""));
        assertTheOfficialClientAcceptsTheStream();
    }

    @Test
    void usageBeforeAFailureIsOnRunError() {
        encode(new Event.RunStarted(null), new Event.Usage("gpt-x", 10, 2, null, null));

        assertThat(encode(new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, "gone")).get(0).get("usage")).isEqualTo(json("""
                [{"model":"gpt-x","inputTokens":10,"outputTokens":2,"totalTokens":12}]"""));
        assertTheOfficialClientAcceptsTheStream();
    }

    @ParameterizedTest(name = "{0} model calls")
    @CsvSource({"2, 32, 13", "3, 41, 17"})
    void usageOfModelCallsWithoutTokenDetailsIsSummedOnRunFinished(int calls, long input, long output) {
        encode(new Event.RunStarted(null));
        encode(callsWithoutTokenDetails(calls));

        assertThat(encode(new Event.RunFinished()).get(0).get("usage")).isEqualTo(json("""
                [{"model":"local","inputTokens":%d,"outputTokens":%d,"totalTokens":%d}]"""
                .formatted(input, output, input + output)));
        assertTheOfficialClientAcceptsTheStream();
    }

    @Test
    void usageOfModelCallsWithoutTokenDetailsIsSummedOnRunError() {
        encode(new Event.RunStarted(null));
        encode(callsWithoutTokenDetails(2));

        assertThat(encode(new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, "gone")).get(0).get("usage")).isEqualTo(json("""
                [{"model":"local","inputTokens":32,"outputTokens":13,"totalTokens":45}]"""));
    }

    @Test
    void usageTheClientWasShownBeforeItReattachedCountsTowardsTheRunsUsage() {
        AguiTesting reattach = AguiTesting.http();
        Event.Usage[] calls = callsWithoutTokenDetails(3);
        reattach.exchange().prime(new Envelope("thread-1", "run-1", 1, 1L, new Event.RunStarted(null)));
        reattach.exchange().prime(new Envelope("thread-1", "run-1", 2, 2L, calls[0]));
        reattach.exchange().prime(new Envelope("thread-1", "run-1", 3, 3L, calls[1]));

        List<JsonNode> frames = reattach.encode("thread-1", "run-1", calls[2], new Event.RunFinished());

        assertThat(frames.get(frames.size() - 1).get("usage")).isEqualTo(json("""
                [{"model":"local","inputTokens":41,"outputTokens":17,"totalTokens":58}]"""));
    }

    @Test
    void firstEventOtherThanRunStartedIsPrecededByRunStarted() {
        assertThat(types(encode(new Event.ApprovalResolved("appr-1", true, null, "alice"),
                new Event.StepStarted("executing_tools"))))
                .containsExactly("RUN_STARTED", "STEP_STARTED:executing_tools");
        assertTheOfficialClientAcceptsTheStream();
    }

    @Test
    void resumedRunGoesOutUnderTheResumingInputsRunId() {
        AguiTesting resume = AguiTesting.http();
        resume.decode("""
                {"threadId":"thread-1","runId":"run-2","messages":[],
                 "resume":[{"interruptId":"appr-1","status":"resolved","payload":{"approved":true}}]}""");

        List<JsonNode> frames = resume.encode("thread-1", "run-1", new Event.ApprovalResolved("appr-1", true, null, "x"),
                new Event.StepStarted("executing_tools"), new Event.RunFinished());

        assertThat(types(frames)).containsExactly("RUN_STARTED", "STEP_STARTED:executing_tools",
                "STEP_FINISHED:executing_tools", "RUN_FINISHED:success");
        assertThat(frames).filteredOn(f -> f.has("runId"))
                .allSatisfy(f -> assertThat(f.get("runId").textValue()).isEqualTo("run-2"));
    }

    @Test
    void eventsOfOtherRunsOfTheThreadAreNotPartOfTheStream() {
        List<JsonNode> frames = new ArrayList<>();
        frames.addAll(http.encode("thread-1", "run-0", new Event.ApprovalRequested("appr-0", "call-0", "old", null,
                null, null, RiskLevel.LOW)));
        frames.addAll(http.encode("thread-1", "run-1", new Event.RunStarted(null)));
        frames.addAll(http.encode("thread-1", "run-0", new Event.StepStarted("elsewhere")));
        frames.addAll(http.encode("thread-1", "run-1", new Event.RunFinished()));

        assertThat(types(frames)).containsExactly("RUN_STARTED", "RUN_FINISHED:success");
    }

    @Test
    void resumeStreamShowsOnlyTheRunThatContinues() {
        AguiTesting resume = AguiTesting.http();
        resume.decode("""
                {"threadId":"thread-1","runId":"run-2","messages":[],
                 "resume":[{"interruptId":"appr-1","status":"resolved","payload":{"approved":true}}]}""");

        resume.encode("thread-1", "run-1", new Event.ApprovalResolved("appr-1", true, null, "x"));

        assertThat(resume.encode("thread-1", "run-9", new Event.RunFinished())).isEmpty();
        assertThat(types(resume.encode("thread-1", "run-1", new Event.RunFinished()))).containsExactly("RUN_FINISHED:success");
    }

    @Test
    void approvalRequestedClosesWhatIsOpenAndEndsTheRunWithAnInterrupt() {
        encode(new Event.RunStarted(null), new Event.StepStarted("thinking"));

        List<JsonNode> frames = encode(new Event.ApprovalRequested("appr-1", "call-1", "generate_inspection_report",
                "Generates official PDF inspection report", json("{\"inspection_id\":\"INS-2024-001\"}"),
                "User requested to finalize the inspection report", RiskLevel.HIGH));

        assertThat(frames).containsExactly(
                json("{\"type\":\"STEP_FINISHED\",\"stepName\":\"thinking\",\"timestamp\":1705318200300}"),
                json("""
                        {"type":"RUN_FINISHED","threadId":"thread-1","runId":"run-1",
                         "outcome":{"type":"interrupt","interrupts":[{
                           "id":"appr-1","reason":"tool_call","message":"Generates official PDF inspection report",
                           "toolCallId":"call-1",
                           "responseSchema":{"type":"object",
                             "properties":{"approved":{"type":"boolean"},"feedback":{"type":"string"}},
                             "required":["approved"]},
                           "metadata":{"toolName":"generate_inspection_report",
                             "parameters":{"inspection_id":"INS-2024-001"},
                             "reasoning":"User requested to finalize the inspection report","riskLevel":"high"}}]},
                         "timestamp":1705318200300}"""));
        assertThat(http.exchange().done()).isTrue();
        assertTheOfficialClientAcceptsTheStream();
    }

    @Test
    void interruptWithoutADescriptionOmitsItsMessage() {
        List<JsonNode> frames = encode(new Event.ApprovalRequested("appr-1", "call-1", "delete_all", null, null, null,
                RiskLevel.CRITICAL));

        JsonNode interrupt = frames.get(1).get("outcome").get("interrupts").get(0);
        assertThat(interrupt.has("message")).isFalse();
        assertThat(interrupt.get("metadata")).isEqualTo(json("""
                {"toolName":"delete_all","parameters":{},"reasoning":"","riskLevel":"critical"}"""));
    }

    @Test
    void onlyTheFirstApprovalOfARunEndsItAndLaterOnesAreNotSent() {
        encode(new Event.RunStarted(null),
                new Event.ApprovalRequested("appr-1", "call-1", "a", "first", null, null, RiskLevel.LOW));

        assertThat(encode(new Event.ApprovalRequested("appr-2", "call-2", "b", "second", null, null, RiskLevel.LOW)))
                .isEmpty();
        assertTheOfficialClientAcceptsTheStream();
    }

    @Test
    void errorBeforeAnyFrameIsTheWholeErrorBody() {
        List<JsonNode> frames = http.encodeError(new GatewayError(ErrorCode.BUSY,
                "a run is already active in conversation thread-1", Map.of("run_id", "run-0")));

        assertThat(frames).containsExactly(json("""
                {"error":{"code":"run_in_progress","message":"a run is already active in conversation thread-1",
                          "details":{"run_id":"run-0"}}}"""));
        assertThat(http.exchange().done()).isTrue();
        assertThat(http.encode("thread-1", "run-1", new Event.RunStarted(null))).isEmpty();
    }

    @Test
    void errorBodyWithoutDetailsOmitsThem() {
        AguiTesting fresh = AguiTesting.http();

        assertThat(fresh.encodeError(GatewayError.of(ErrorCode.INVALID_JSON, "the message is not valid JSON")))
                .containsExactly(json("{\"error\":{\"code\":\"invalid_json\",\"message\":\"the message is not valid JSON\"}}"));
    }

    @Test
    void undecodableBodyIsAnsweredWithAnErrorBodyNamingTheField() {
        AguiTesting fresh = AguiTesting.http();
        GatewayError error = ((Decoded.Failure) fresh.decode("{\"runId\":\"r\",\"messages\":[]}"))
                .error();

        assertThat(fresh.encodeError(error)).containsExactly(json("""
                {"error":{"code":"validation_error","message":"threadId is required: a non-empty string",
                          "details":{"field":"threadId"}}}"""));
        assertThat(error.code().httpStatus()).isEqualTo(422);
    }

    @Test
    void errorAfterTheFirstFrameIsRunErrorAndEndsTheStream() {
        encode(new Event.RunStarted(null), new Event.TextDelta("m1", "Hi"));

        List<JsonNode> frames = http.encodeError(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway is shutting down"));

        assertWellFormed(frames);
        assertThat(frames).containsExactly(json("""
                {"type":"RUN_ERROR","message":"the gateway is shutting down","code":"unavailable",
                 "timestamp":1705318209999}"""));
        assertThat(http.exchange().done()).isTrue();
        stream.addAll(frames);
        assertTheOfficialClientAcceptsTheStream();
    }
}
