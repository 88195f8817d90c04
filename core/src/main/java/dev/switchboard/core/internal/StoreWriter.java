package dev.switchboard.core.internal;

import dev.switchboard.core.Plural;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.StoreBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The hub's store writer: one thread that commits queued writes in batches, in queue order.
 * Whatever is queued while a batch commits goes into the next one, so under load a commit carries
 * many writes and the store's fixed cost per commit is shared. Each write's follow-up runs after
 * its batch committed (the hub marks its events durable there), and an action runs after
 * everything queued before it is committed. Nobody waits for it on the way to a client: events
 * are fanned out when they are emitted.
 */
public final class StoreWriter {
    private static final Logger log = LoggerFactory.getLogger(StoreWriter.class);
    private static final int MAX_BATCH = 8192;
    /**
     * A batch that found at least this many writes queued at once is a sign of load: it waits up to
     * {@link #LINGER_NANOS} for more before it commits (group commit). A commit's cost grows with
     * the conversations it touches (each dirties its own pages of the store), not with their events,
     * so under load a longer batch, with more events of each conversation, costs much less per
     * event; a quiet gateway's writes commit at once.
     */
    private static final int BUSY = 64;
    private static final long LINGER_NANOS = 5_000_000;
    /** A write that takes longer than this is logged (at INFO: a busy database, not a fault). */
    private static final long SLOW_WRITE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The fence of a write that carries none (see {@link #write(String, long, Consumer, Runnable)}). */
    static final long UNFENCED = -1;
    /** Writes queued past which {@link #awaitRoom} holds emitters back until the store catches up. */
    static final int MAX_QUEUED = 1 << 16;

    private sealed interface Op permits Write, Action, Stop {
    }

    /** A write of {@code conversationId} (null: of none in particular) under {@code fence}. */
    private record Write(String conversationId, long fence, Consumer<StoreBatch> fill, Runnable afterCommit)
            implements Op {
    }

    private record Action(Runnable action) implements Op {
    }

    private record Stop(CompletableFuture<Void> done) implements Op {
    }

    private final BlockingQueue<Op> queue = new LinkedBlockingQueue<>();
    private final ConversationStore store;
    private final HubMetrics metrics;
    private final Thread thread;
    private final StoreBatch batch = new StoreBatch();
    private final List<Runnable> afterCommit = new ArrayList<>();
    private final long lingerNanos;
    private volatile boolean stopped;

    public StoreWriter(ConversationStore store, HubMetrics metrics) {
        this(store, metrics, LINGER_NANOS);
    }

    /** With how long a busy batch waits for more ({@link #LINGER_NANOS} but in tests). */
    StoreWriter(ConversationStore store, HubMetrics metrics, long lingerNanos) {
        this.store = store;
        this.metrics = metrics;
        this.lingerNanos = lingerNanos;
        this.thread = new Thread(this::loop, "switchboard-store-writer");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Queues a write; {@code afterCommit} (may be null) runs once it is stored. */
    public void write(Consumer<StoreBatch> fill, Runnable afterCommit) {
        queue.add(new Write(null, UNFENCED, fill, afterCommit));
    }

    /**
     * Queues a write of the conversation under {@code fence} ({@link StoreBatch#fence}; none when
     * {@link #UNFENCED}). Writes of one conversation under two fences never share a batch, so the
     * store keeps or leaves out each as its own fence says.
     */
    public void write(String conversationId, long fence, Consumer<StoreBatch> fill, Runnable afterCommit) {
        queue.add(new Write(conversationId, fence, fill, afterCommit));
    }

    /**
     * Waits while the store is more than {@link #MAX_QUEUED} writes behind, so a runtime that
     * emits faster than the store can write for long is slowed to the store's pace instead of
     * growing the queue (and every conversation's tail) without bound. Call it holding no lock the
     * writer's follow-ups take.
     */
    public void awaitRoom() {
        while (queue.size() >= MAX_QUEUED && thread.isAlive()) {
            LockSupport.parkNanos(100_000);
        }
    }

    /**
     * Queues an action to run after everything queued before it is committed; once the writer
     * has stopped (everything is committed), runs it at once.
     */
    public void run(Runnable action) {
        queue.add(new Action(action));
        if (stopped) {
            // The loop may have missed it: whoever removes it runs it, once.
            Op op;
            while ((op = queue.poll()) != null) {
                if (op instanceof Action a) {
                    runSafely(a.action);
                }
            }
        }
    }

    /** Commits everything queued so far and stops the thread. */
    public CompletableFuture<Void> stop() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        queue.add(new Stop(done));
        return done;
    }

    private void loop() {
        List<Op> ops = new ArrayList<>(MAX_BATCH);
        while (true) {
            try {
                ops.add(queue.take());
            } catch (InterruptedException e) {
                log.warn("store writer interrupted; committing what is queued and stopping");
                queue.drainTo(ops);
                ops.removeIf(op -> !(op instanceof Write));
            }
            queue.drainTo(ops, MAX_BATCH - 1);
            if (ops.size() >= BUSY) {
                linger(ops);
            }
            for (int i = 0; i < ops.size(); i++) {
                Op op = ops.get(i);
                if (op instanceof Write w) {
                    if (w.fence != UNFENCED) {
                        Long fence = batch.fenceOf(w.conversationId);
                        if (fence != null && fence != w.fence) {
                            flush();
                        }
                        batch.fence(w.conversationId, w.fence);
                    }
                    w.fill.accept(batch);
                    if (w.afterCommit != null) {
                        afterCommit.add(w.afterCommit);
                    }
                } else if (op instanceof Action a) {
                    flush();
                    runSafely(a.action);
                } else if (op instanceof Stop s) {
                    flush();
                    stopped = true;
                    // Queued after the stop: actions still run (they wait for nothing now), writes are refused.
                    List<Op> late = new ArrayList<>(ops.subList(i + 1, ops.size()));
                    queue.drainTo(late);
                    for (Op o : late) {
                        if (o instanceof Action a) {
                            runSafely(a.action);
                        } else if (o instanceof Write) {
                            log.error("a write queued after the store writer stopped was dropped");
                        }
                    }
                    s.done.complete(null);
                    return;
                }
            }
            flush();
            ops.clear();
            if (Thread.interrupted()) {
                return;
            }
        }
    }

    /** Adds what is queued over the next {@link #lingerNanos}, up to a full batch. */
    private void linger(List<Op> ops) {
        long deadline = System.nanoTime() + lingerNanos;
        long left;
        while (ops.size() < MAX_BATCH && (left = deadline - System.nanoTime()) > 0) {
            Op next;
            try {
                next = queue.poll(left, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                // Seen at the end of this batch, which is committed first.
                Thread.currentThread().interrupt();
                return;
            }
            if (next == null) {
                return;
            }
            ops.add(next);
            if (next instanceof Stop) {
                return;
            }
            queue.drainTo(ops, MAX_BATCH - ops.size());
        }
    }

    private void flush() {
        if (!batch.isEmpty()) {
            try {
                long start = System.nanoTime();
                store.write(batch);
                long took = System.nanoTime() - start;
                metrics.stored(batch.messages().size() + batch.events().size() + batch.approvals().size(), took);
                if (took > SLOW_WRITE_NANOS) {
                    // Everything queued behind it waited as long: in a cluster, the leases of runs that ended meanwhile.
                    log.info("the store took {} ms to write {}", TimeUnit.NANOSECONDS.toMillis(took),
                            Plural.of(batch.events().size(), "event"));
                }
            } catch (RuntimeException e) {
                // The events were delivered already: live clients keep their run, the log says what history lost.
                log.error("store write of {} failed; delivered but not stored",
                        Plural.of(batch.events().size(), "event"), e);
            }
            batch.clear();
        }
        for (Runnable r : afterCommit) {
            runSafely(r);
        }
        afterCommit.clear();
    }

    private static void runSafely(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            log.error("store writer task failed", e);
        }
    }
}
