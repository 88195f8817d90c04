package dev.switchboard.core.internal;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;

/**
 * Runs tasks one at a time, in submission order, on a shared executor: the commands of one
 * connection keep their order while different connections' commands run in parallel.
 */
public final class SerialExecutor implements Executor {
    private final Executor delegate;
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    private boolean running;

    public SerialExecutor(Executor delegate) {
        this.delegate = delegate;
    }

    @Override
    public void execute(Runnable task) {
        synchronized (this) {
            tasks.add(task);
            if (running) {
                return;
            }
            running = true;
        }
        drainElsewhere();
    }

    /**
     * Runs {@code here} on the calling thread when no task of this executor is queued or running,
     * holding the tasks submitted meanwhile until it returns. When {@code here} returns false (it
     * did nothing: the work must be done as usual), or the executor was busy, {@code otherwise}
     * runs as {@link #execute} would run it, before every task submitted after this call. If
     * {@code here} throws, {@code otherwise} does not run.
     */
    public void executeHereOr(BooleanSupplier here, Runnable otherwise) {
        synchronized (this) {
            if (running) {
                tasks.add(otherwise);
                return;
            }
            running = true;
        }
        boolean done = true;
        try {
            done = here.getAsBoolean();
        } finally {
            boolean more;
            synchronized (this) {
                if (!done) {
                    tasks.addFirst(otherwise);
                }
                more = !tasks.isEmpty();
                running = more;
            }
            if (more) {
                drainElsewhere();
            }
        }
    }

    /** Drains the queue on the delegate; the caller set {@link #running}. */
    private void drainElsewhere() {
        try {
            delegate.execute(this::drain);
        } catch (RuntimeException e) {
            synchronized (this) {
                tasks.clear();
                running = false;
            }
            throw e;
        }
    }

    private void drain() {
        while (true) {
            Runnable next;
            synchronized (this) {
                next = tasks.poll();
                if (next == null) {
                    running = false;
                    return;
                }
            }
            next.run();
        }
    }
}
