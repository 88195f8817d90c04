package dev.switchboard.core.testing;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Principal;
import dev.switchboard.core.Subscriber;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** A {@link Subscriber} for tests: records what the hub sends it, with an optional queue bound. */
public class RecordingSubscriber implements Subscriber {
    private final Principal principal;
    private final boolean answersApprovals;
    private final int capacity;
    private final BlockingQueue<Envelope> events = new LinkedBlockingQueue<>();
    private final BlockingQueue<GatewayError> errors = new LinkedBlockingQueue<>();
    private volatile boolean overflowed;

    public RecordingSubscriber(Principal principal, boolean answersApprovals, int capacity) {
        this.principal = principal;
        this.answersApprovals = answersApprovals;
        this.capacity = capacity;
    }

    public RecordingSubscriber() {
        this(Principal.ANONYMOUS, true, Integer.MAX_VALUE);
    }

    @Override
    public Principal principal() {
        return principal;
    }

    @Override
    public boolean answersApprovals() {
        return answersApprovals;
    }

    @Override
    public boolean deliver(Envelope envelope) {
        if (events.size() >= capacity) {
            return false;
        }
        events.add(envelope);
        return true;
    }

    @Override
    public void overflowed() {
        overflowed = true;
    }

    @Override
    public void reject(GatewayError error) {
        errors.add(error);
    }

    public boolean isOverflowed() {
        return overflowed;
    }

    /** Waits for the next event. */
    public Envelope next(Duration timeout) throws InterruptedException {
        Envelope e = events.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (e == null) {
            throw new AssertionError("no event within " + timeout);
        }
        return e;
    }

    /** Waits for events up to and including the first that matches. */
    public List<Envelope> until(Predicate<Event> last, Duration timeout) throws InterruptedException {
        List<Envelope> out = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            Envelope e = events.poll(Math.max(0, left), TimeUnit.NANOSECONDS);
            if (e == null) {
                throw new AssertionError("no matching event within " + timeout + "; got " + out);
            }
            out.add(e);
            if (last.test(e.event())) {
                return out;
            }
        }
    }

    /** Waits for the next error. */
    public GatewayError nextError(Duration timeout) throws InterruptedException {
        GatewayError e = errors.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (e == null) {
            throw new AssertionError("no error within " + timeout);
        }
        return e;
    }

    /** Events received and not yet taken. */
    public List<Envelope> pending() {
        return new ArrayList<>(events);
    }

    public List<GatewayError> pendingErrors() {
        return new ArrayList<>(errors);
    }
}
