package dev.switchboard.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Subscribers' wake-ups held back while one thread emits a burst of events. A subscriber queues
 * each event it is delivered and wakes its own thread to send what is queued; when the hub knows
 * that the emitting thread is about to emit many events in a row (a runtime that plays a short
 * run inside its {@code start}), it opens a burst on that thread, and a subscriber that wakes its
 * thread through {@link #hold} is woken once, as the burst closes, to send the burst's events in one
 * write, rather than for its first events and again for the rest.
 *
 * <p>A burst lasts as long as the code that opened it (try-with-resources); a burst opened inside
 * another is the outer one. A subscriber whose queue nears its bound while its wake-up is held
 * wakes its thread at once (see {@link #hold}): a burst never makes a queue overflow.
 */
public final class DeliveryBurst implements AutoCloseable {
    private static final ThreadLocal<DeliveryBurst> OPEN = new ThreadLocal<>();
    /** What {@link #open} answers inside a burst: its close leaves the outer burst open. */
    private static final DeliveryBurst NESTED = new DeliveryBurst();

    private final List<Executor> executors = new ArrayList<>(2);
    private final List<Runnable> wakeUps = new ArrayList<>(2);

    private DeliveryBurst() {
    }

    /** Opens a burst on this thread, or joins the one open on it. */
    public static DeliveryBurst open() {
        if (OPEN.get() != null) {
            return NESTED;
        }
        DeliveryBurst burst = new DeliveryBurst();
        OPEN.set(burst);
        return burst;
    }

    /**
     * Holds {@code wakeUp} for {@code executor} until the burst open on this thread closes; false
     * when none is open (the caller runs it now). A subscriber holds one wake-up at a time, and
     * runs its own thread's work at once, without waiting for the burst, when its queue fills.
     */
    public static boolean hold(Executor executor, Runnable wakeUp) {
        DeliveryBurst burst = OPEN.get();
        if (burst == null) {
            return false;
        }
        burst.executors.add(executor);
        burst.wakeUps.add(wakeUp);
        return true;
    }

    /**
     * Closes the burst: every wake-up it held goes to its executor, in the order held. One that its
     * executor refuses (it has shut down, and its connections with it) has nobody to wake, and does
     * not keep the others back.
     */
    @Override
    public void close() {
        if (this == NESTED) {
            return;
        }
        OPEN.remove();
        for (int i = 0; i < wakeUps.size(); i++) {
            try {
                executors.get(i).execute(wakeUps.get(i));
            } catch (RejectedExecutionException gone) {
                // Its connection is closing with its event loop.
            }
        }
    }
}
