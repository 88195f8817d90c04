package dev.switchboard.core.spi;

import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.InputMessage;

import java.util.List;

/**
 * An agent that answers runs. {@link #start} must return quickly: the runtime does its work
 * on its own threads and reports through the {@link RunContext}, ending every run with
 * exactly one {@link RunContext#finish()} or {@link RunContext#fail}. The hub calls {@code start}
 * and {@link #resume} on its workers, and {@code start} on the thread that received the request
 * (a connection's event loop) only when {@link #startsWithoutWaiting} says so; a runtime may report
 * from inside them: one whose work is only computation can play a short run, even to its end,
 * before {@code start} returns, and save the hand-over to a thread of its own.
 */
public interface AgentRuntime extends AutoCloseable {

    /** The runtime's id, also its {@code --runtime} value. */
    String id();

    /** Starts a run. */
    RunHandle start(RunRequest request, RunContext context);

    /**
     * Whether {@link #start} of a run with these new messages returns without waiting on anything:
     * no read of the store ({@link RunContext#history()} included), no network, no lock held for
     * long, only computation and the context's calls. The hub may then start the run on the thread
     * that received its request, a connection's event loop, where a wait would hold every
     * connection of that loop, and save the hand-over to its workers (when it knows its own part
     * of the start needs no store either). False unless a runtime says otherwise.
     */
    default boolean startsWithoutWaiting(List<InputMessage> newMessages) {
        return false;
    }

    /**
     * Whether this runtime reads the conversation's history ({@link RunContext#history}) at every
     * run's start, as a model's runtime does to send it along. The hub then keeps the short history
     * of a conversation it created in memory, where the start reads it without waiting
     * ({@link RunContext#historyInMemory}). False unless a runtime says otherwise: one that never
     * reads it spares the hub that memory, which every young collection copies while it lives.
     */
    default boolean readsHistory() {
        return false;
    }

    /**
     * Continues a run that was waiting for approvals when its gateway stopped: {@code decided}
     * holds those approvals, now decided, as stored. The default fails the run, saying that
     * this runtime cannot continue it.
     */
    default RunHandle resume(RunRequest request, List<ApprovalRecord> decided, RunContext context) {
        context.fail(ErrorCode.UNAVAILABLE, "runtime " + id()
                + " cannot continue a run that was interrupted by a restart; start a new run");
        return () -> { };
    }

    /** Releases the runtime's threads and connections. */
    @Override
    default void close() {
    }
}
