package dev.switchboard.core;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.List;
import java.util.Objects;

/** What the frontend side says, decoded from any dialect. */
public sealed interface Command {

    /**
     * Start a run in a conversation with new messages. {@code runId} may be null (the hub
     * makes one); {@code context}, {@code state}, {@code forwardedProps} and {@code metadata}
     * may be null.
     */
    record StartRun(String conversationId, String runId, String parentRunId, List<InputMessage> messages,
                    List<ToolSpec> tools, JsonNode context, JsonNode state, JsonNode forwardedProps,
                    JsonNode metadata) implements Command {
        public StartRun {
            Objects.requireNonNull(conversationId, "conversationId");
            messages = List.copyOf(messages);
            tools = tools == null ? List.of() : List.copyOf(tools);
        }

        /** A run started by one user message and nothing else. */
        public static StartRun of(String conversationId, InputMessage message) {
            return new StartRun(conversationId, null, null, List.of(message), List.of(), null, null, null, null);
        }
    }

    /** A person's answer to a pending approval. {@code payload} is free-form (may be null). */
    record DecideApproval(String approvalId, boolean approved, String feedback, JsonNode payload) implements Command {
        public DecideApproval { Objects.requireNonNull(approvalId, "approvalId"); }
    }

    /** Cancel the active run of a conversation ({@code runId} null for whichever is active). */
    record CancelRun(String conversationId, String runId) implements Command {
        public CancelRun { Objects.requireNonNull(conversationId, "conversationId"); }
    }

    /**
     * Continue a conversation's interrupted run by answering every approval it waits for, all
     * at once: a resume that leaves one unanswered, or names one that is not pending, changes
     * nothing and is refused.
     */
    record Resume(String conversationId, List<DecideApproval> decisions) implements Command {
        public Resume {
            Objects.requireNonNull(conversationId, "conversationId");
            decisions = List.copyOf(decisions);
        }
    }

    /**
     * Join a conversation's fan-out. Events with a {@code seq} above {@code afterSeq} that are
     * already stored are replayed first. A negative {@code afterSeq} means no cursor: with
     * {@code catchUp} (a person joining) the active run is replayed from its start and the
     * approvals still pending are shown again; without it, live events only (an HTTP request that
     * continues a run it already saw).
     */
    record Subscribe(String conversationId, long afterSeq, boolean catchUp) implements Command {
        /** An {@code afterSeq} asking for the active run, or else the last one, from its start. */
        public static final long LAST_RUN = -2;

        public Subscribe { Objects.requireNonNull(conversationId, "conversationId"); }

        /** A client reattaching without a cursor: the active or last run from its start, then live events. */
        public static Subscribe lastRun(String conversationId) {
            return new Subscribe(conversationId, LAST_RUN, false);
        }

        /** A person joins: live events, after the active run so far and the pending approvals. */
        public static Subscribe live(String conversationId) {
            return new Subscribe(conversationId, -1, true);
        }

        /** Strictly what happens from now on. */
        public static Subscribe liveOnly(String conversationId) {
            return new Subscribe(conversationId, -1, false);
        }
    }

    /** A dialect-level keep-alive the connection answers itself. */
    record Ping() implements Command {
    }
}
