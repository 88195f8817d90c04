package dev.switchboard.core;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.databind.JsonNode;

import java.util.List;
import java.util.Objects;

/**
 * What the agent side says during a run, independent of any wire dialect.
 *
 * <p>Events carry no sequence number or timestamp themselves: the hub stamps each one into an
 * {@link Envelope} when it is emitted. Adapters switch on {@link #kind()} to encode.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = Event.RunStarted.class, name = "run_started"),
    @JsonSubTypes.Type(value = Event.StepStarted.class, name = "step_started"),
    @JsonSubTypes.Type(value = Event.StepFinished.class, name = "step_finished"),
    @JsonSubTypes.Type(value = Event.MessageStarted.class, name = "message_started"),
    @JsonSubTypes.Type(value = Event.TextDelta.class, name = "text_delta"),
    @JsonSubTypes.Type(value = Event.MessageCompleted.class, name = "message_completed"),
    @JsonSubTypes.Type(value = Event.ReasoningStarted.class, name = "reasoning_started"),
    @JsonSubTypes.Type(value = Event.ReasoningDelta.class, name = "reasoning_delta"),
    @JsonSubTypes.Type(value = Event.ReasoningCompleted.class, name = "reasoning_completed"),
    @JsonSubTypes.Type(value = Event.ToolCallStarted.class, name = "tool_call_started"),
    @JsonSubTypes.Type(value = Event.ToolCallArgs.class, name = "tool_call_args"),
    @JsonSubTypes.Type(value = Event.ToolCallCompleted.class, name = "tool_call_completed"),
    @JsonSubTypes.Type(value = Event.ToolResult.class, name = "tool_result"),
    @JsonSubTypes.Type(value = Event.ApprovalRequested.class, name = "approval_requested"),
    @JsonSubTypes.Type(value = Event.ApprovalResolved.class, name = "approval_resolved"),
    @JsonSubTypes.Type(value = Event.StateSnapshot.class, name = "state_snapshot"),
    @JsonSubTypes.Type(value = Event.StateDelta.class, name = "state_delta"),
    @JsonSubTypes.Type(value = Event.Custom.class, name = "custom"),
    @JsonSubTypes.Type(value = Event.Usage.class, name = "usage"),
    @JsonSubTypes.Type(value = Event.RunFinished.class, name = "run_finished"),
    @JsonSubTypes.Type(value = Event.RunFailed.class, name = "run_failed"),
})
public sealed interface Event {

    /** The event's type, for a {@code switch} in encoders. */
    Kind kind();

    /** True for the two events that end a run. */
    default boolean terminal() {
        return kind() == Kind.RUN_FINISHED || kind() == Kind.RUN_FAILED;
    }

    /** True for the events that start or end a run. */
    default boolean boundsRun() {
        return kind() == Kind.RUN_STARTED || terminal();
    }

    /** One constant per event record. */
    enum Kind {
        RUN_STARTED, STEP_STARTED, STEP_FINISHED, MESSAGE_STARTED, TEXT_DELTA, MESSAGE_COMPLETED,
        REASONING_STARTED, REASONING_DELTA, REASONING_COMPLETED,
        TOOL_CALL_STARTED, TOOL_CALL_ARGS, TOOL_CALL_COMPLETED, TOOL_RESULT, APPROVAL_REQUESTED,
        APPROVAL_RESOLVED, STATE_SNAPSHOT, STATE_DELTA, CUSTOM, USAGE, RUN_FINISHED, RUN_FAILED
    }

    /** A run began; {@code parentRunId} is set when the run continues another (may be null). */
    record RunStarted(String parentRunId) implements Event {
        public Kind kind() { return Kind.RUN_STARTED; }
    }

    /** A named step began, such as {@code thinking}, {@code routing} or {@code executing_tools}. */
    record StepStarted(String stepName) implements Event {
        public StepStarted { Objects.requireNonNull(stepName, "stepName"); }
        public Kind kind() { return Kind.STEP_STARTED; }
    }

    /** The named step ended. */
    record StepFinished(String stepName) implements Event {
        public StepFinished { Objects.requireNonNull(stepName, "stepName"); }
        public Kind kind() { return Kind.STEP_FINISHED; }
    }

    /** A message from the agent side began. */
    record MessageStarted(String messageId, Role role) implements Event {
        public MessageStarted {
            Objects.requireNonNull(messageId, "messageId");
            Objects.requireNonNull(role, "role");
        }
        public Kind kind() { return Kind.MESSAGE_STARTED; }
    }

    /** A piece of a message's text; never empty. */
    record TextDelta(String messageId, String delta) implements Event {
        public TextDelta {
            Objects.requireNonNull(messageId, "messageId");
            if (delta == null || delta.isEmpty()) {
                throw new IllegalArgumentException("a text delta must not be empty");
            }
        }
        public Kind kind() { return Kind.TEXT_DELTA; }
    }

    /** A message ended; {@code text} is the whole text of all its deltas. */
    record MessageCompleted(String messageId, String text, List<Citation> citations) implements Event {
        public MessageCompleted {
            Objects.requireNonNull(messageId, "messageId");
            Objects.requireNonNull(text, "text");
            citations = citations == null ? List.of() : List.copyOf(citations);
        }
        public Kind kind() { return Kind.MESSAGE_COMPLETED; }
    }

    /**
     * The agent began to reason aloud: a reasoning message, shown apart from the answer and not
     * kept in the conversation's history.
     */
    record ReasoningStarted(String messageId) implements Event {
        public ReasoningStarted { Objects.requireNonNull(messageId, "messageId"); }
        public Kind kind() { return Kind.REASONING_STARTED; }
    }

    /** A piece of a reasoning message's text; never empty. */
    record ReasoningDelta(String messageId, String delta) implements Event {
        public ReasoningDelta {
            Objects.requireNonNull(messageId, "messageId");
            if (delta == null || delta.isEmpty()) {
                throw new IllegalArgumentException("a reasoning delta must not be empty");
            }
        }
        public Kind kind() { return Kind.REASONING_DELTA; }
    }

    /** A reasoning message ended; {@code text} is the whole text of its deltas. */
    record ReasoningCompleted(String messageId, String text) implements Event {
        public ReasoningCompleted {
            Objects.requireNonNull(messageId, "messageId");
            Objects.requireNonNull(text, "text");
        }
        public Kind kind() { return Kind.REASONING_COMPLETED; }
    }

    /** The agent began a tool call; arguments follow as {@link ToolCallArgs}. */
    record ToolCallStarted(String toolCallId, String toolName, String parentMessageId) implements Event {
        public ToolCallStarted {
            Objects.requireNonNull(toolCallId, "toolCallId");
            Objects.requireNonNull(toolName, "toolName");
        }
        public Kind kind() { return Kind.TOOL_CALL_STARTED; }
    }

    /** A piece of a tool call's JSON arguments. */
    record ToolCallArgs(String toolCallId, String delta) implements Event {
        public ToolCallArgs { Objects.requireNonNull(toolCallId, "toolCallId"); Objects.requireNonNull(delta, "delta"); }
        public Kind kind() { return Kind.TOOL_CALL_ARGS; }
    }

    /** A tool call's arguments are complete: {@code arguments} is a JSON object. */
    record ToolCallCompleted(String toolCallId, String toolName, JsonNode arguments) implements Event {
        public ToolCallCompleted {
            Objects.requireNonNull(toolCallId, "toolCallId");
            Objects.requireNonNull(toolName, "toolName");
            arguments = Json.objectOrEmpty(arguments);
        }
        public Kind kind() { return Kind.TOOL_CALL_COMPLETED; }
    }

    /** The outcome of a tool call: its result text when {@code ok}, else why it failed. */
    record ToolResult(String toolCallId, String toolName, JsonNode arguments, boolean ok, String content,
                      String messageId) implements Event {
        public ToolResult {
            Objects.requireNonNull(toolCallId, "toolCallId");
            Objects.requireNonNull(toolName, "toolName");
            Objects.requireNonNull(content, "content");
            Objects.requireNonNull(messageId, "messageId");
            arguments = Json.objectOrEmpty(arguments);
        }
        public Kind kind() { return Kind.TOOL_RESULT; }
    }

    /** The run waits for a person to approve or reject a tool call. */
    record ApprovalRequested(String approvalId, String toolCallId, String toolName, String description,
                             JsonNode arguments, String reasoning, RiskLevel risk) implements Event {
        public ApprovalRequested {
            Objects.requireNonNull(approvalId, "approvalId");
            Objects.requireNonNull(toolCallId, "toolCallId");
            Objects.requireNonNull(toolName, "toolName");
            description = description == null ? "" : description;
            reasoning = reasoning == null ? "" : reasoning;
            Objects.requireNonNull(risk, "risk");
            arguments = Json.objectOrEmpty(arguments);
        }
        public Kind kind() { return Kind.APPROVAL_REQUESTED; }
    }

    /** A person decided an approval; {@code decidedBy} is the deciding principal's id. */
    record ApprovalResolved(String approvalId, boolean approved, String feedback, String decidedBy) implements Event {
        public ApprovalResolved { Objects.requireNonNull(approvalId, "approvalId"); }
        public Kind kind() { return Kind.APPROVAL_RESOLVED; }
    }

    /** The whole shared state of the conversation. */
    record StateSnapshot(JsonNode state) implements Event {
        public StateSnapshot { state = Json.objectOrEmpty(state); }
        public Kind kind() { return Kind.STATE_SNAPSHOT; }
    }

    /** A change to the shared state as an RFC 6902 JSON Patch (an array of operations). */
    record StateDelta(JsonNode patch) implements Event {
        public StateDelta {
            if (patch == null || !patch.isArray()) {
                throw new IllegalArgumentException("a state delta is a JSON Patch array");
            }
        }
        public Kind kind() { return Kind.STATE_DELTA; }
    }

    /** An application-defined event, passed through by dialects that have such a thing. */
    record Custom(String name, JsonNode value) implements Event {
        public Custom {
            Objects.requireNonNull(name, "name");
            value = value == null ? com.fasterxml.jackson.databind.node.NullNode.getInstance() : value;
        }
        public Kind kind() { return Kind.CUSTOM; }
    }

    /**
     * Tokens one model call of the run used. {@code inputTokens} and {@code outputTokens} are
     * totals; {@code reasoningTokens} (part of the output) and {@code cachedInputTokens} (part of
     * the input) are null when the model does not report them. A run may report several.
     */
    record Usage(String model, long inputTokens, long outputTokens, Long reasoningTokens, Long cachedInputTokens)
            implements Event {
        public Usage {
            Objects.requireNonNull(model, "model");
            if (inputTokens < 0 || outputTokens < 0) {
                throw new IllegalArgumentException("token counts are not negative");
            }
        }
        /** Input and output tokens together. */
        public long totalTokens() { return inputTokens + outputTokens; }
        public Kind kind() { return Kind.USAGE; }
    }

    /** The run ended normally. */
    record RunFinished() implements Event {
        public Kind kind() { return Kind.RUN_FINISHED; }
    }

    /** The run ended with an error. */
    record RunFailed(ErrorCode code, String message) implements Event {
        public RunFailed {
            Objects.requireNonNull(code, "code");
            message = message == null ? code.defaultMessage() : message;
        }
        public Kind kind() { return Kind.RUN_FAILED; }
    }
}
