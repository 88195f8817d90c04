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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The hub's store writer: one thread that commits queued writes in batches, in queue order.
 * Whatever is queued while a batch commits goes into the next one, so under load a commit carries
 * many writes and the store's fixed cost per commit is shared. Each write's follow-up runs after
 * its batch committed (the hub marks its events durable there), and an action runs after
 * everything queued before it is committed. Nobody waits for it on the way to a client: events
 * are fanned out when they are emitted.
 *
 * <p>A conversation's writes do not pass the queue one by one: the hub keeps them in the
 * conversation's own list, under the lock it holds anyway, and queues the conversation (a
 * {@link Source}) once, when its list stops being empty; the writer takes the whole list when it
 * comes to it. So an event costs its producer a list append, not a trip through the queue's lock,
 * and the writer's follow-ups take each conversation's lock once a batch, not once an event.
 */
public final class StoreWriter {
    private static final Logger log = LoggerFactory.getLogger(StoreWriter.class);
    /** A batch is committed once it holds this many events, and lingers no longer once this many writes wait. */
    static final int MAX_BATCH = 8192;
    /**
     * A batch that found at least this many writes queued at once is a sign of load: it waits up to
     * {@link #LINGER_NANOS} for more before it commits (group commit). A commit's cost grows with
     * the conversations it touches (each dirties its own pages of the store), not with their events,
     * so under load a longer batch, with more events of each conversation, costs much less per
     * event; a quiet gateway's writes commit at once.
     */
    private static final int BUSY = 64;
    /**
     * How long a busy batch waits (a full batch, {@link #MAX_BATCH}, ends it sooner). At 1,000
     * streaming conversations a wait of 5 ms gave each conversation about one event a commit, so
     * every event cost a row and its index entry; 25 ms gave it several, which share a row (a
     * segment), and 100 ms about twice as many again. Each commit still writes a page of the index
     * for every conversation it touches, so the writer's CPU per event fell by a fifth once more
     * (2.3 against 2.9 µs) and the gateway's events/s at 1,000 clients rose by some 30%; the paced
     * latency did not gain, as a commit is a longer burst of work. Clients do not wait for it
     * (events reach them before they are stored), nor does anyone who waits for a commit: an
     * action queued meanwhile ends the wait. What it costs is memory (the unstored events a
     * conversation's tail holds) and what a crash loses of what clients saw, which the seq
     * reservations and the resume rule make good (the README's crash recovery).
     */
    private static final long LINGER_NANOS = 100_000_000;
    /**
     * The least time from one commit to the next while writes trickle in (fewer than {@link #BUSY}
     * queued): the writes that come meanwhile wait, asleep, and commit together. A hundred LLM answers
     * streaming at 50 tokens a second each gave the writer a few tokens a commit, and every commit
     * writes whole pages to the log and takes the file's locks; the writer was then over a third of
     * the gateway's CPU, some 57 µs a token. At 5 ms a commit still carried about one token of each
     * conversation it touched, a row each, and the writer took a fifth of the gateway's CPU (some
     * 17 µs a token); at 50 ms a conversation's tokens of a commit share its row, and the gateway's
     * CPU a token fell from 54-74 to 43-49 µs, with the time to first token's tail of the other
     * conversations, which wait for a core less (bench/NOTES.md). Clients do not wait for it, as
     * for {@link #LINGER_NANOS}. A write after a quiet spell still commits at once, and an action
     * (someone waits for what is queued to be stored) wakes the writer.
     */
    private static final long SPACING_NANOS = 50_000_000;
    /** A write that takes longer than this is logged (at INFO: a busy database, not a fault). */
    private static final long SLOW_WRITE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The fence of a write that carries none (see {@link Sink#batch}). */
    static final long UNFENCED = -1;
    /** Writes queued past which {@link #awaitRoom} holds emitters back until the store catches up. */
    static final int MAX_QUEUED = 1 << 16;

    /**
     * Writes a producer keeps under its own lock: queued with {@link #write(Source)} when the first
     * of them is added, taken all at once by the writer. Each write added is counted with
     * {@link #added()}.
     */
    public interface Source {
        /**
         * On the writer's thread: adds every write held so far to {@code sink}, in order, and lets
         * go of them; answers how many there were.
         */
        int drainTo(Sink sink);
    }

    /** Where a {@link Source} puts its writes; only on the writer's thread. */
    public interface Sink {
        /**
         * The batch to add a write of {@code conversationId} under {@code fence} to
         * ({@link #UNFENCED}: none); the writes before are committed first when the batch holds the
         * conversation under another fence, so the store keeps or leaves out each as its own fence says.
         */
        StoreBatch batch(String conversationId, long fence);

        /** Runs {@code action} once everything added so far is committed. */
        void afterCommit(Runnable action);
    }

    private sealed interface Op permits Write, Drain, Action, Stop, Full {
    }

    /**
     * Queued when the writes waiting reach {@link #MAX_BATCH}: it ends a lingering batch's wait,
     * which otherwise sleeps until its deadline or an action ({@link #counted} wakes the writer
     * when it queues this); nothing else is done with it.
     */
    private enum Full implements Op {
        INSTANCE
    }

    /** A write of no conversation in particular. */
    private record Write(Consumer<StoreBatch> fill, Runnable afterCommit) implements Op {
    }

    /** A {@link Source}'s writes. */
    private record Drain(Source source) implements Op {
    }

    private record Action(Runnable action) implements Op {
    }

    private record Stop(CompletableFuture<Void> done) implements Op {
    }

    private final BlockingQueue<Op> queue = new LinkedBlockingQueue<>();
    /** Writes queued and not yet taken into a batch: {@link Write}s and those {@link Source}s hold. */
    private final AtomicInteger queuedWrites = new AtomicInteger();
    private final Sink sink = new Sink() {
        @Override
        public StoreBatch batch(String conversationId, long fence) {
            if (fence != UNFENCED) {
                Long held = batch.fenceOf(conversationId);
                if (held != null && held != fence) {
                    flush();
                }
                batch.fence(conversationId, fence);
            }
            return batch;
        }

        @Override
        public void afterCommit(Runnable action) {
            afterCommit.add(action);
        }
    };
    private final ConversationStore store;
    private final HubMetrics metrics;
    private final Thread thread;
    private final StoreBatch batch = new StoreBatch();
    private final List<Runnable> afterCommit = new ArrayList<>();
    private final long lingerNanos;
    private final long spacingNanos;
    /** Wake-ups of lingering batches; written only on the writer's thread (so {@code ++} is safe). */
    private volatile long lingerWakeUps;
    /** When the last commit ended ({@link System#nanoTime}); only on the writer's thread. */
    private long committedAt;
    private volatile boolean stopped;

    public StoreWriter(ConversationStore store, HubMetrics metrics) {
        this(store, metrics, LINGER_NANOS, SPACING_NANOS);
    }

    /**
     * With how long a busy batch waits for more, and the least time between commits while writes
     * trickle in ({@link #LINGER_NANOS} and {@link #SPACING_NANOS} but in tests).
     */
    StoreWriter(ConversationStore store, HubMetrics metrics, long lingerNanos, long spacingNanos) {
        this.store = store;
        this.metrics = metrics;
        this.lingerNanos = lingerNanos;
        this.spacingNanos = spacingNanos;
        this.committedAt = System.nanoTime() - spacingNanos;
        this.thread = new Thread(this::loop, "switchboard-store-writer");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Queues a write; {@code afterCommit} (may be null) runs once it is stored. */
    public void write(Consumer<StoreBatch> fill, Runnable afterCommit) {
        queue.add(new Write(fill, afterCommit));
        counted();
    }

    /**
     * Queues a source whose writes were none until now; it is drained in queue order, so its writes
     * are committed before any action queued after them.
     */
    public void write(Source source) {
        queue.add(new Drain(source));
    }

    /** Counts a write a {@link Source} added (queued or not yet). */
    public void added() {
        counted();
    }

    private void counted() {
        if (queuedWrites.incrementAndGet() == MAX_BATCH) {
            queue.add(Full.INSTANCE);
            // A lingering batch sleeps until it is woken (see linger).
            LockSupport.unpark(thread);
        }
    }

    /** Whether fewer than half of {@link #MAX_QUEUED} writes are queued: {@link #awaitRoom} waits for nothing. */
    public boolean hasRoom() {
        return queuedWrites.get() < MAX_QUEUED / 2;
    }

    /**
     * Waits while the store is more than {@link #MAX_QUEUED} writes behind, so a runtime that
     * emits faster than the store can write for long is slowed to the store's pace instead of
     * growing the queue (and every conversation's tail) without bound. Call it holding no lock the
     * writer's follow-ups take.
     */
    public void awaitRoom() {
        while (queuedWrites.get() >= MAX_QUEUED && thread.isAlive()) {
            LockSupport.parkNanos(100_000);
        }
    }

    /**
     * Queues an action to run after everything queued before it is committed; once the writer
     * has stopped (everything is committed), runs it at once.
     */
    public void run(Runnable action) {
        queue.add(new Action(action));
        // It may be asleep between commits (see space).
        LockSupport.unpark(thread);
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
        LockSupport.unpark(thread);
        return done;
    }

    private void loop() {
        List<Op> ops = new ArrayList<>();
        while (true) {
            try {
                ops.add(queue.take());
            } catch (InterruptedException e) {
                log.warn("store writer interrupted; committing what is queued and stopping");
                queue.drainTo(ops);
                ops.removeIf(op -> op instanceof Action || op instanceof Stop);
            }
            queue.drainTo(ops);
            if (!awaited(ops, 0)) {
                if (queuedWrites.get() >= BUSY) {
                    linger(ops);
                } else {
                    space(ops);
                }
            }
            for (int i = 0; i < ops.size(); i++) {
                Op op = ops.get(i);
                if (op instanceof Drain d) {
                    queuedWrites.addAndGet(-d.source.drainTo(sink));
                    if (batch.events().size() >= MAX_BATCH) {
                        flush();
                    }
                } else if (op instanceof Write w) {
                    queuedWrites.decrementAndGet();
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
                        } else if (o != Full.INSTANCE) {
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

    /**
     * Waits up to {@link #lingerNanos} while fewer than {@link #MAX_BATCH} writes are queued, adding
     * what is queued meanwhile (writes added to a source already queued are in it: they need no op);
     * an action or a stop among them ends it, as someone waits for them (one found before the wait
     * keeps it from starting). It sleeps rather than waits on the queue: only what ends the wait (an
     * action, a stop, the {@link Full} op) wakes it, so the writes that come meanwhile cost their
     * producers no wake-up of this thread. Waiting on the queue instead, every op that found it
     * empty woke the writer, to add the op and wait again: paced at 1,000 streaming conversations
     * the writer switched in some 1,500 times a second against 190 now, its wake-ups were an
     * eighth of its CPU profile, and each cost the producer (a runtime's thread, a hub worker) a
     * futex call.
     */
    private void linger(List<Op> ops) {
        long deadline = System.nanoTime() + lingerNanos;
        long left;
        while (queuedWrites.get() < MAX_BATCH && (left = deadline - System.nanoTime()) > 0) {
            LockSupport.parkNanos(this, left);
            lingerWakeUps++;
            if (Thread.currentThread().isInterrupted()) {
                // Seen at the end of this batch, which is committed first.
                return;
            }
            int from = ops.size();
            queue.drainTo(ops);
            if (awaited(ops, from)) {
                return;
            }
        }
        queue.drainTo(ops);
    }

    /** How many times a lingering batch woke up (for tests; read it once the writer is idle). */
    long lingerWakeUps() {
        return lingerWakeUps;
    }

    /**
     * Sleeps until {@link #spacingNanos} after the last commit, unless an action or a stop comes
     * (either wakes the writer) or the writes queued reach {@link #BUSY}, adding what is queued
     * meanwhile. It sleeps rather than waits on the queue, so the writes that come meanwhile cost
     * their producers no wake-up of this thread.
     */
    private void space(List<Op> ops) {
        long left;
        while ((left = committedAt + spacingNanos - System.nanoTime()) > 0 && queuedWrites.get() < BUSY) {
            LockSupport.parkNanos(this, left);
            if (Thread.currentThread().isInterrupted()) {
                // Seen at the end of this batch, which is committed first.
                return;
            }
            int from = ops.size();
            queue.drainTo(ops);
            if (awaited(ops, from)) {
                return;
            }
        }
    }

    /** Whether an op from {@code from} on is an action or a stop: someone waits for what is queued to be stored. */
    private static boolean awaited(List<Op> ops, int from) {
        for (int i = from; i < ops.size(); i++) {
            if (ops.get(i) instanceof Action || ops.get(i) instanceof Stop) {
                return true;
            }
        }
        return false;
    }

    private void flush() {
        if (!batch.isEmpty()) {
            try {
                long start = System.nanoTime();
                store.write(batch);
                committedAt = System.nanoTime();
                long took = committedAt - start;
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
