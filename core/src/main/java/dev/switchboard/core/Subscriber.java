package dev.switchboard.core;

/**
 * A live connection of some dialect, as the hub sees it: it receives the events of the
 * conversations it belongs to and the errors answered to its own commands.
 *
 * <p>{@link #deliver} is called on the thread that emits the event, under its conversation's
 * lock, and must not block: a subscriber queues the event for its own thread and answers
 * {@code false} when its bounded queue is full, after which the hub drops it and calls
 * {@link #overflowed()}. One that throws instead is logged and dropped the same way: it missed
 * the event, which still reaches every other subscriber and the store.
 */
public interface Subscriber {

    /** Who is connected. */
    Principal principal();

    /**
     * The key its rate limits count against: the principal, or for an anonymous client its
     * remote address.
     */
    default String clientKey() {
        return principal().id();
    }

    /**
     * What the subscriber speaks, for metrics: a dialect's id, or another fixed name. Never a value
     * a client chose.
     */
    default String dialect() {
        return "other";
    }

    /**
     * The thread that writes this subscriber's events to its client (a connection's event loop), or
     * null when it has none of its own. A run this subscriber asks for offers it to its runtime
     * ({@link dev.switchboard.core.spi.RunContext#home}): an upstream read there reaches the client
     * with no hand-over between threads.
     */
    default java.util.concurrent.Executor executor() {
        return null;
    }

    /**
     * The W3C {@code traceparent} the client sent with the request or upgrade that opened this
     * connection, if any: the runs it asks for, the approvals it decides and its resumes join that
     * trace. Null when it sent none.
     */
    default String traceparent() {
        return null;
    }

    /** Whether a person on this connection can answer approval requests. */
    boolean answersApprovals();

    /**
     * Queues an event; false when the queue is full, and from then on false for every event: a
     * subscriber that missed an event must not be shown a later one, or its client's cursor would
     * pass the missed one and a resume from it would skip it. The hub drops it and tells it so
     * ({@link #overflowed}, perhaps more than once).
     */
    boolean deliver(Envelope envelope);

    /**
     * Queues events of a run in progress that the client was shown on an earlier connection,
     * before it resumed from its cursor: the dialect's per-run state (open messages, steps,
     * chunk numbers) catches up on them in order with what is delivered, and nothing is sent, so
     * what follows the cursor reads as the continuation it is. Called before the events after the
     * cursor are delivered; they do not count against the queue's bounds.
     */
    default void prime(java.util.List<Envelope> shown) {
    }

    /**
     * A resume from a cursor found nothing after it and no run active: the client has seen the
     * whole conversation. A connection that lives for one run's events (an HTTP stream) can
     * answer so and end; others stay for what comes next (the default).
     */
    default void caughtUp() {
    }

    /**
     * The subscriber fell too far behind and was dropped; it should close (the client may resume).
     * Called again for each event refused after the first.
     */
    void overflowed();

    /** Answers an error to this connection alone. Thread-safe, non-blocking. */
    void reject(GatewayError error);
}
