package dev.switchboard.core.spi;

import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.InputMessage;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * The runtime's side of one run. Every method is thread-safe. After the run has ended
 * (finished, failed or cancelled) further calls are ignored.
 */
public interface RunContext {

    /** Emits an event of the run. {@code RunStarted}, {@code RunFinished} and {@code RunFailed} are the hub's. */
    void emit(Event event);

    /**
     * Asks a person to approve a tool call. The stage completes when someone decides, on a
     * thread that may do blocking work; it completes exceptionally if the run ends first.
     *
     * <p>While a decision is pending the run is taken to do nothing else: a gateway that shuts
     * down ends it at once with {@code UNAVAILABLE} rather than after its grace period, and the
     * approval stays pending; answered after the restart, it continues the work through
     * {@link AgentRuntime#resume}.
     */
    CompletionStage<ApprovalDecision> requestApproval(ApprovalRequest request);

    /** Ends the run normally. */
    void finish();

    /** Ends the run with an error. */
    void fail(ErrorCode code, String message);

    /**
     * The run's trace context: a runtime's spans (model calls, tool calls, upstream calls) are its
     * children, and what it sends upstream carries it as {@code traceparent}. The root context when
     * traces are off.
     */
    default io.opentelemetry.context.Context traceContext() {
        return io.opentelemetry.context.Context.root();
    }

    /**
     * The thread that writes the run's events to the connection that asked for it: in the gateway,
     * that connection's Netty event loop; null when the run has no such connection (it continues
     * after a restart, or was asked for by a subscriber with no thread of its own). A runtime that
     * reads an upstream without blocking may read it there: what it emits is then written by the
     * same thread, with no hand-over. Nothing that blocks may run on it.
     */
    default java.util.concurrent.Executor home() {
        return null;
    }

    /**
     * Whether the store (or, in a cluster, the bus) is so far behind that {@link #emit} may soon
     * wait for it. A runtime reading its upstream on an event loop ({@link #home}), where waiting
     * is not allowed, stops reading while this holds and reads on once it no longer does.
     */
    default boolean backedUp() {
        return false;
    }

    /** True once the run has ended or been cancelled; a runtime stops its work then. */
    boolean isDone();

    /**
     * The conversation's stored messages before this run's new ones, oldest first. May read the
     * store: call it from the runtime's own threads, never from an event loop.
     */
    List<InputMessage> history();

    /**
     * What {@link #history()} answers, when memory holds it whole (a short conversation this
     * gateway created, for a runtime that {@link AgentRuntime#readsHistory reads history}); null
     * when only the store can tell. Never waits, so a start on an event loop may call it, and call
     * {@link #history()} off the loop when it answers null.
     */
    default List<InputMessage> historyInMemory() {
        return null;
    }
}
