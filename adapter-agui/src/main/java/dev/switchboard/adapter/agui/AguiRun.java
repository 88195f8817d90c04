package dev.switchboard.adapter.agui;

import dev.switchboard.core.Event;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.FrameWriter;
import dev.switchboard.core.spi.JsonFrame;

import java.io.IOException;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * One AG-UI run as one connection writes it: the thread and run ids it goes out under, and the
 * step, text and reasoning messages and tool calls it has open, so that every {@code *_END} and
 * {@code STEP_FINISHED} pairs with a start and nothing is left open when the run ends, and the
 * token usage its terminal event reports.
 *
 * <p>Both transports translate the events inside a run here; how a run starts and ends, and how an
 * approval is asked for, is theirs.
 */
final class AguiRun {
    final String threadId;
    final String runId;

    private String openStep;
    private final Set<String> openMessages = new LinkedHashSet<>();
    private final Set<String> openReasoning = new LinkedHashSet<>();
    private final Set<String> openToolCalls = new LinkedHashSet<>();
    /** Messages and tool calls whose text or arguments the client was shown on an earlier connection. */
    private final Set<String> shownText = new java.util.HashSet<>();
    private final Set<String> shownArgs = new java.util.HashSet<>();
    /** Tokens used so far, summed per model, for the run's terminal event. */
    private final Map<String, Event.Usage> usage = new LinkedHashMap<>();
    /**
     * The message the last delta was of, open when {@link #deltaMessageOpen}: its next delta looks
     * nothing up. Any other event may open or close messages, so it forgets that.
     */
    private String deltaMessageId;
    private boolean deltaMessageOpen;
    /** What a message's {@code TEXT_MESSAGE_CONTENT}s write before their text, encoded once for all of them. */
    private final JsonFrame.RepeatedPart contentHeads = AguiEvents.textMessageContentHeads();

    AguiRun(String threadId, String runId) {
        this.threadId = threadId;
        this.runId = runId;
    }

    /**
     * Takes in an event the client was shown before it resumed. This connection's stream still
     * opens what it continues (every stream reads whole), but text and arguments the client
     * already has are not sent again when their message or call completes.
     */
    void prime(Event event) {
        switch (event.kind()) {
            case TEXT_DELTA -> shownText.add(((Event.TextDelta) event).messageId());
            case MESSAGE_COMPLETED -> shownText.add(((Event.MessageCompleted) event).messageId());
            case TOOL_CALL_ARGS -> shownArgs.add(((Event.ToolCallArgs) event).toolCallId());
            case TOOL_CALL_COMPLETED -> shownArgs.add(((Event.ToolCallCompleted) event).toolCallId());
            case USAGE -> usage.merge(((Event.Usage) event).model(), (Event.Usage) event, AguiRun::sum);
            default -> {
            }
        }
    }

    /**
     * Writes the events for one core event inside the run. Run starts and ends, approvals and
     * approval decisions are the transport's and write nothing here.
     */
    void encode(Event event, long timestamp, FrameWriter out) throws IOException {
        if (event.kind() != Event.Kind.TEXT_DELTA) {
            deltaMessageOpen = false;
        }
        switch (event.kind()) {
            case STEP_STARTED -> {
                // The profile allows one step at a time, and the official client refuses a second
                // STEP_STARTED of a step that is still open.
                closeStep(timestamp, out);
                openStep = ((Event.StepStarted) event).stepName();
                AguiEvents.stepStarted(out, timestamp, openStep);
            }
            case STEP_FINISHED -> {
                if (((Event.StepFinished) event).stepName().equals(openStep)) {
                    closeStep(timestamp, out);
                }
            }
            case MESSAGE_STARTED -> {
                Event.MessageStarted started = (Event.MessageStarted) event;
                if (openMessages.add(started.messageId())) {
                    AguiEvents.textMessageStart(out, timestamp, started.messageId(), textRole(started.role()));
                }
            }
            case TEXT_DELTA -> {
                Event.TextDelta delta = (Event.TextDelta) event;
                if (!deltaMessageOpen || !delta.messageId().equals(deltaMessageId)) {
                    openMessage(delta.messageId(), timestamp, out);
                    deltaMessageId = delta.messageId();
                    deltaMessageOpen = true;
                }
                AguiEvents.textMessageContent(out, timestamp, contentHeads.of(delta.messageId()), delta.delta());
            }
            case MESSAGE_COMPLETED -> {
                Event.MessageCompleted done = (Event.MessageCompleted) event;
                if (!openMessages.contains(done.messageId())) {
                    // A message this connection saw no delta of (it joined late, or the runtime
                    // sends whole messages): sent whole.
                    openMessage(done.messageId(), timestamp, out);
                    if (!done.text().isEmpty() && !shownText.contains(done.messageId())) {
                        AguiEvents.textMessageContent(out, timestamp, contentHeads.of(done.messageId()), done.text());
                    }
                }
                openMessages.remove(done.messageId());
                AguiEvents.textMessageEnd(out, timestamp, done.messageId());
            }
            case REASONING_STARTED -> openReasoning(((Event.ReasoningStarted) event).messageId(), timestamp, out);
            case REASONING_DELTA -> {
                Event.ReasoningDelta delta = (Event.ReasoningDelta) event;
                openReasoning(delta.messageId(), timestamp, out);
                AguiEvents.reasoningContent(out, timestamp, delta.messageId(), delta.delta());
            }
            case REASONING_COMPLETED -> {
                Event.ReasoningCompleted done = (Event.ReasoningCompleted) event;
                if (!openReasoning.contains(done.messageId())) {
                    openReasoning(done.messageId(), timestamp, out);
                    if (!done.text().isEmpty()) {
                        AguiEvents.reasoningContent(out, timestamp, done.messageId(), done.text());
                    }
                }
                openReasoning.remove(done.messageId());
                AguiEvents.reasoningEnd(out, timestamp, done.messageId());
            }
            case USAGE -> usage.merge(((Event.Usage) event).model(), (Event.Usage) event, AguiRun::sum);
            case TOOL_CALL_STARTED -> {
                Event.ToolCallStarted started = (Event.ToolCallStarted) event;
                if (openToolCalls.add(started.toolCallId())) {
                    AguiEvents.toolCallStart(out, timestamp, started.toolCallId(), started.toolName(),
                            started.parentMessageId());
                }
            }
            case TOOL_CALL_ARGS -> {
                // Arguments of a call whose start this connection did not see have no name to start
                // it with; TOOL_CALL_COMPLETED sends them whole instead.
                Event.ToolCallArgs args = (Event.ToolCallArgs) event;
                if (openToolCalls.contains(args.toolCallId()) && !args.delta().isEmpty()) {
                    AguiEvents.toolCallArgs(out, timestamp, args.toolCallId(), args.delta());
                }
            }
            case TOOL_CALL_COMPLETED -> {
                Event.ToolCallCompleted done = (Event.ToolCallCompleted) event;
                if (!openToolCalls.remove(done.toolCallId())) {
                    AguiEvents.toolCallStart(out, timestamp, done.toolCallId(), done.toolName(), null);
                    if (!shownArgs.contains(done.toolCallId())) {
                        AguiEvents.toolCallArgs(out, timestamp, done.toolCallId(), done.arguments().toString());
                    }
                }
                AguiEvents.toolCallEnd(out, timestamp, done.toolCallId());
            }
            case TOOL_RESULT -> {
                Event.ToolResult result = (Event.ToolResult) event;
                if (openToolCalls.remove(result.toolCallId())) {
                    AguiEvents.toolCallEnd(out, timestamp, result.toolCallId());
                }
                AguiEvents.toolCallResult(out, timestamp, result.messageId(), result.toolCallId(), result.content());
            }
            case STATE_SNAPSHOT -> AguiEvents.stateSnapshot(out, timestamp, ((Event.StateSnapshot) event).state());
            case STATE_DELTA -> AguiEvents.stateDelta(out, timestamp, ((Event.StateDelta) event).patch());
            case CUSTOM -> {
                Event.Custom custom = (Event.Custom) event;
                AguiEvents.custom(out, timestamp, custom.name(), custom.value());
            }
            case RUN_STARTED, APPROVAL_REQUESTED, APPROVAL_RESOLVED, RUN_FINISHED, RUN_FAILED -> {
            }
        }
    }

    /**
     * Ends whatever is open, innermost first: tool calls, text and reasoning messages, then the step. The
     * official client refuses a RUN_FINISHED while any of them is open.
     */
    void closeOpen(long timestamp, FrameWriter out) throws IOException {
        deltaMessageOpen = false;
        for (String toolCallId : openToolCalls) {
            AguiEvents.toolCallEnd(out, timestamp, toolCallId);
        }
        openToolCalls.clear();
        for (String messageId : openMessages) {
            AguiEvents.textMessageEnd(out, timestamp, messageId);
        }
        openMessages.clear();
        for (String messageId : openReasoning) {
            AguiEvents.reasoningEnd(out, timestamp, messageId);
        }
        openReasoning.clear();
        closeStep(timestamp, out);
    }

    /** The run's token usage, one entry per model, for its terminal event. */
    Collection<Event.Usage> usage() {
        return usage.values();
    }

    private void openReasoning(String messageId, long timestamp, FrameWriter out) throws IOException {
        if (openReasoning.add(messageId)) {
            AguiEvents.reasoningStart(out, timestamp, messageId);
        }
    }

    private static Event.Usage sum(Event.Usage a, Event.Usage b) {
        return new Event.Usage(a.model(), a.inputTokens() + b.inputTokens(), a.outputTokens() + b.outputTokens(),
                sum(a.reasoningTokens(), b.reasoningTokens()), sum(a.cachedInputTokens(), b.cachedInputTokens()));
    }

    /**
     * The sum of two optional counts, null when neither was reported. Not a conditional
     * expression: one that mixes {@code Long} and {@code long} unboxes, so two nulls would throw.
     */
    private static Long sum(Long a, Long b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        return a + b;
    }

    private void closeStep(long timestamp, FrameWriter out) throws IOException {
        if (openStep != null) {
            String step = openStep;
            openStep = null;
            AguiEvents.stepFinished(out, timestamp, step);
        }
    }

    private void openMessage(String messageId, long timestamp, FrameWriter out) throws IOException {
        // Looked up before it is added: most calls are a delta's, whose message is open.
        if (!openMessages.contains(messageId)) {
            openMessages.add(messageId);
            AguiEvents.textMessageStart(out, timestamp, messageId, "assistant");
        }
    }

    /** A text message's role; AG-UI streams tool output as TOOL_CALL_RESULT, never as text. */
    private static String textRole(Role role) {
        return role == Role.TOOL ? "assistant" : role.wireName();
    }
}
