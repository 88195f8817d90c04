package dev.switchboard.core.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Command;
import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.EventCodec;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Ids;
import dev.switchboard.core.Json;
import dev.switchboard.core.LogContext;
import dev.switchboard.core.Plural;
import dev.switchboard.core.Principal;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.Subscriber;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ApprovalRequest;
import dev.switchboard.core.spi.ClusterBus;
import dev.switchboard.core.spi.ConversationRecord;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.StoreBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongFunction;

/**
 * The hub's side of a cluster. A node keeps each conversation it holds in memory in step with the
 * cluster: it listens to the conversation's channel and applies what other nodes emit, in seq order,
 * reading the bus's history to fill a gap. A node writes a conversation only while it holds its write
 * lease ({@link #hold}): the lease's holder gives the seqs, so they stay the conversation's plain
 * integers, and it publishes every event it emits after its own subscribers have it.
 *
 * <p>The crash rule is the single node's: no seq reaches anyone before a reservation above it is in
 * the (shared) store, reservations never go down in a cluster, and a writer that takes over from one
 * that did not let go cleanly starts above every reservation, and first fails the run that writer
 * left unfinished. A lease that nobody renews is claimed by a reaper on any node, which does just that.
 *
 * <p>Approvals of a run another node owns are answered there: the decision travels to the owner, and
 * its answer comes back. With no owner, a decision is taken where it is made, as after a restart.
 */
public final class ClusterLink {
    /** Logged under the hub's name, as every part of the hub logs. */
    private static final Logger log = LoggerFactory.getLogger(ConversationHub.class);
    private static final int PAGE = 500;
    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final Duration FORWARD_WAIT = Duration.ofSeconds(10);
    /** How many times a conversation is read again for an event missing before one that arrived. */
    private static final int GAP_READS = 20;
    private static final long GAP_READ_PAUSE_MS = 100;
    /** How many times, 100 ms apart, a read waits for the store to reach what the bus no longer holds. */
    private static final int STORE_LAG_WAITS = 30;
    /** How many times, 100 ms apart, a reattach waits for a run another node is starting to reach this node. */
    private static final int LAST_RUN_WAITS = 10;
    /** How many times, 100 ms apart, a resume waits for its cursor's event from a node writing it. */
    private static final int REACH_WAITS = 10;
    /** Events waiting for the bus past which emitters wait (see {@link #awaitRoom}). */
    static final int MAX_QUEUED = 1 << 14;

    private final ClusterBus bus;
    private final ConversationStore store;
    private final Executor workers;
    private final ScheduledExecutorService timer;
    private final Map<String, Forward> forwards = new ConcurrentHashMap<>();
    /** Approval requests sent to the node that writes their conversation, waiting for its answer. */
    private final Map<String, CompletableFuture<ApprovalRecord>> asks = new ConcurrentHashMap<>();
    /** Conversations taken over at once (each waits mostly on Redis and PostgreSQL, not on a core). */
    private static final int TAKEOVER_THREADS = 16;
    /** How long a take-over waits for the events it adopted to be stored before it fails the run. */
    private static final long STORE_WAIT_SECONDS = 30;
    private static final int APPLY_THREADS = 2;
    private static final int PUBLISH_ANSWER_THREADS = 2;
    /**
     * Takes conversations over from writers that stopped, apart from the hub's workers: a busy node
     * must not leave a dead writer's run unfailed while its workers wait on requests; and a few at
     * once, as a dead node leaves every conversation it wrote to be taken over together.
     */
    private final ExecutorService takeovers;
    /**
     * Applies what other nodes publish, each conversation's entries in order on a lane of its own:
     * off the bus's I/O thread, which must not wait for a conversation's lock while the answers to
     * this node's Redis commands queue behind it, and apart from the hub's workers, which may all be
     * busy.
     */
    private final ExecutorService appliers;
    /**
     * Handles the bus's answers to this node's publishes, which take their conversation's lock: off
     * the bus's I/O thread, whose every other answer (a lease's renewal among them) would otherwise
     * wait while a thread holding that lock waits on PostgreSQL (a seq reservation, say).
     */
    private final ExecutorService publishAnswers;
    /** Expired leases this node has taken and whose conversations it has not yet taken over. */
    private final AtomicInteger takingOver = new AtomicInteger();
    /**
     * Leases acquired for a take-over, by conversation, until its hold takes them up: renewed with
     * the leases of loaded conversations, as loading a conversation may take a while.
     */
    private final Map<String, ClusterBus.Lease> leasesAhead = new ConcurrentHashMap<>();
    /** Events emitted here and not yet answered by the bus. */
    private final AtomicInteger queued = new AtomicInteger();
    private ConversationTable table;
    private Emitter emitter;
    private Approvals approvals;

    public ClusterLink(ClusterBus bus, ConversationStore store, Executor workers, ScheduledExecutorService timer) {
        this.bus = Objects.requireNonNull(bus, "bus");
        this.store = store;
        this.workers = workers;
        this.timer = timer;
        AtomicInteger n = new AtomicInteger();
        this.takeovers = Executors.newFixedThreadPool(TAKEOVER_THREADS, r -> {
            Thread t = new Thread(r, "switchboard-cluster-takeover-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        AtomicInteger m = new AtomicInteger();
        this.appliers = Executors.newFixedThreadPool(APPLY_THREADS, r -> {
            Thread t = new Thread(r, "switchboard-cluster-apply-" + m.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        AtomicInteger p = new AtomicInteger();
        this.publishAnswers = Executors.newFixedThreadPool(PUBLISH_ANSWER_THREADS, r -> {
            Thread t = new Thread(r, "switchboard-cluster-published-" + p.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** Joins the parts of the hub this link works with, and starts listening, renewing and reaping. */
    public void start(ConversationTable table, Emitter emitter, Approvals approvals) {
        this.table = table;
        this.emitter = emitter;
        this.approvals = approvals;
        await(bus.listen(this::received));
        long every = Math.max(100, bus.leaseTtl().toMillis() / 3);
        timer.scheduleWithFixedDelay(this::renewAll, every, every, TimeUnit.MILLISECONDS);
        // Often, so that a dead writer's runs fail soon after its leases lapse; a reap is one script call.
        long reapEvery = Math.max(50, Math.min(250, bus.leaseTtl().toMillis() / 30));
        timer.scheduleWithFixedDelay(this::reap, reapEvery, reapEvery, TimeUnit.MILLISECONDS);
    }

    public String nodeId() {
        return bus.nodeId();
    }

    // ---------------------------------------------------------------- keeping conversations in step

    /**
     * Listens to a conversation just loaded, then reads what the bus holds after the store's last
     * event; call it before the state is shared. What arrives meanwhile waits for the read.
     */
    void attach(ConversationState c) {
        c.catchingUp = true;
        SerialExecutor lane = new SerialExecutor(appliers);
        c.live = e -> lane.execute(() -> arrived(c, e));
        await(bus.subscribe(c.id, c.live));
        catchUp(c);
    }

    /** Stops listening to a conversation that left memory. */
    void detach(ConversationState c) {
        if (c.live != null) {
            bus.unsubscribe(c.id, c.live).exceptionally(e -> {
                log.debug("could not leave the channel of conversation {}", c.id, e);
                return null;
            });
        }
    }

    /** An entry from the conversation's channel, on the conversation's lane of {@link #appliers}. */
    private void arrived(ConversationState c, ClusterBus.Entry e) {
        synchronized (c) {
            if (c.retired || e.seq() <= c.lastSeq) {
                return;
            }
            if (c.catchingUp) {
                hold(c, e);
                return;
            }
            if (e.prevSeq() != c.lastSeq) {
                // Something published before it never arrived (the bus reconnected): read the history.
                hold(c, e);
                c.catchingUp = true;
                workers.execute(LogContext.wrap(c.id, null, () -> catchUpQuietly(c)));
                return;
            }
            apply(c, e);
        }
    }

    /** Keeps an entry that arrived ahead of one it follows, or while the conversation is read; the caller holds the lock. */
    private static void hold(ConversationState c, ClusterBus.Entry e) {
        if (c.held == null) {
            c.held = new TreeMap<>();
        }
        c.held.put(e.seq(), e);
    }

    /** Applies what the cluster has of the conversation after this node's last seq, now; never throws. */
    void catchUpQuietly(ConversationState c) {
        try {
            catchUp(c);
        } catch (RuntimeException e) {
            log.warn("conversation {} could not be brought in step with the cluster: {}", c.id, e.getMessage());
        }
    }

    /**
     * Applies, in order, what the conversation has after its last seq here (see {@link #events}),
     * then what arrived meanwhile.
     */
    private void catchUp(ConversationState c) {
        catchUp(c, STORE_LAG_WAITS);
    }

    /** {@link #catchUp(ConversationState)}, waiting at most {@code storeLagWaits} times for a writer's store (see {@link #events}). */
    private void catchUp(ConversationState c, int storeLagWaits) {
        synchronized (c) {
            c.catchingUp = true;
        }
        try {
            applyPages(c, from -> events(c.id, from, PAGE, storeLagWaits));
        } finally {
            synchronized (c) {
                applyHeld(c);
            }
        }
    }

    /**
     * Applies what arrived while the conversation was read, in order, as far as each entry follows
     * on from the last one applied (its {@code prevSeq} is not above it); the caller holds the lock.
     * An entry whose predecessor is still missing (its writer stores it a moment after publishing)
     * waits, and the conversation is read again shortly, up to {@link #GAP_READS} times: a node never
     * shows an event before one it has not got, unless that one is gone for good.
     */
    private void applyHeld(ConversationState c) {
        c.catchingUp = false;
        if (c.held != null) {
            var pending = c.held.values().iterator();
            while (pending.hasNext()) {
                ClusterBus.Entry e = pending.next();
                if (e.seq() <= c.lastSeq) {
                    pending.remove();
                } else if (e.prevSeq() <= c.lastSeq || c.gapReads >= GAP_READS) {
                    apply(c, e);
                    pending.remove();
                } else {
                    break;
                }
            }
            if (c.held.isEmpty()) {
                c.held = null;
            }
        }
        if (c.held == null) {
            c.gapReads = 0;
            return;
        }
        c.gapReads++;
        c.catchingUp = true;
        timer.schedule(() -> workers.execute(LogContext.wrap(c.id, null, () -> catchUpQuietly(c))), GAP_READ_PAUSE_MS,
                TimeUnit.MILLISECONDS);
    }

    /**
     * Waits for the store's record of a conversation another node created a moment ago, so that this
     * node knows it exists and whose it is: its creator shows the run's first events before its store
     * writer commits the record, and a client may move here at once. Returns at once for a conversation
     * nobody has written (a new one), and gives up after {@link #STORE_LAG_WAITS} reads, 100 ms apart.
     */
    void awaitRecord(ConversationState c) {
        for (int attempt = 0; ; attempt++) {
            boolean written;
            synchronized (c) {
                if (c.persisted) {
                    return;
                }
                written = c.lastSeq > 0;
            }
            if (!written) {
                Optional<String> writer = await(bus.holder(c.id));
                if (writer.isEmpty() || writer.get().equals(bus.nodeId())) {
                    return;
                }
            }
            Optional<ConversationRecord> rec = store.conversation(c.id);
            if (rec.isPresent()) {
                synchronized (c) {
                    if (!c.persisted) {
                        c.persisted = true;
                        c.owner = rec.get().owner();
                    }
                }
                return;
            }
            if (attempt == STORE_LAG_WAITS) {
                return;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    /**
     * Brings the conversation here up to {@code seq} at least, when the cluster has it: a client
     * that moves to this node with a cursor must not be shown what it saw again. While another node
     * writes the conversation, waits up to about a second for a seq the cluster does not have yet.
     */
    void reach(ConversationState c, long seq) {
        for (int attempt = 0; ; attempt++) {
            synchronized (c) {
                if (c.lastSeq >= seq) {
                    return;
                }
            }
            catchUp(c);
            synchronized (c) {
                if (c.lastSeq >= seq) {
                    return;
                }
            }
            // A writer shows its clients an event before it publishes it: a client that moved at once
            // may hold a cursor the cluster does not have yet. While another node writes, wait for it.
            if (attempt == REACH_WAITS) {
                return;
            }
            Optional<String> writer = await(bus.holder(c.id));
            if (writer.isEmpty() || writer.get().equals(bus.nodeId())) {
                return;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    /**
     * Before a reattach to the conversation's last run: brings the conversation here up to what the
     * cluster has and, while another node writes it and no run of it is known here (its start still
     * on its way: a client may ask one node for a run and reattach on another at once), waits for the
     * run's start, up to about a second.
     */
    void awaitLastRun(ConversationState c) {
        for (int attempt = 0; ; attempt++) {
            catchUp(c);
            synchronized (c) {
                if (c.active != null || c.remoteRunId != null) {
                    return;
                }
            }
            Optional<String> writer = await(bus.holder(c.id));
            if (writer.isEmpty() || writer.get().equals(bus.nodeId()) || attempt == LAST_RUN_WAITS) {
                return;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    /** Applies one entry another node published; the caller holds the conversation's lock. */
    private void apply(ConversationState c, ClusterBus.Entry e) {
        Envelope env;
        try {
            env = ClusterPayload.decode(c.id, e.seq(), e.payload());
        } catch (RuntimeException bad) {
            try (LogContext.Scope ids = LogContext.open(c.id, null)) {
                log.warn("skipped event {} of conversation {} from the cluster: {}", e.seq(), c.id, bad.getMessage());
            }
            c.lastSeq = e.seq();
            return;
        }
        emitter.acceptLocked(c, env);
    }

    /**
     * Events of the conversation after {@code afterSeq}, at most {@code limit}, oldest first: from the
     * bus's history while it holds them, from the store before that, and from the store after what
     * the bus holds (events a writer stored and did not publish before it stopped).
     */
    List<Envelope> events(String conversationId, long afterSeq, int limit) {
        return events(conversationId, afterSeq, limit, STORE_LAG_WAITS);
    }

    /**
     * {@link #events(String, long, int)}, waiting at most {@code storeLagWaits} times, 100 ms apart, for
     * the store to reach what the bus no longer holds: none for a writer known to have stopped.
     */
    private List<Envelope> events(String conversationId, long afterSeq, int limit, int storeLagWaits) {
        ClusterBus.History h;
        try {
            h = await(bus.history(conversationId, afterSeq, limit));
        } catch (RuntimeException unreachable) {
            return store.events(conversationId, afterSeq, limit);
        }
        List<Envelope> fromBus = new ArrayList<>(h.entries().size());
        for (ClusterBus.Entry e : h.entries()) {
            fromBus.add(ClusterPayload.decode(conversationId, e.seq(), e.payload()));
        }
        if (h.topSeq() == 0) {
            // The bus holds nothing of the conversation (it lost it, or it expired): the store has it all.
            return store.events(conversationId, afterSeq, limit);
        }
        if (h.continues(afterSeq)) {
            return thenUnpublished(conversationId, afterSeq, fromBus, limit);
        }
        // The bus no longer holds what follows the cursor: the store has it, up to the bus's oldest
        // entry, whose predecessor the entry names. Its writer stores it a moment after publishing:
        // wait for the store to reach it rather than skip what it has not stored yet.
        long busFirst = fromBus.isEmpty() ? Long.MAX_VALUE : fromBus.get(0).seq();
        long before = fromBus.isEmpty() ? 0 : h.entries().get(0).prevSeq();
        List<Envelope> stored = store.events(conversationId, afterSeq, limit);
        for (int wait = 0; wait < storeLagWaits && before > afterSeq && stored.size() < limit
                && (stored.isEmpty() || stored.get(stored.size() - 1).seq() < before); wait++) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
            stored = store.events(conversationId, afterSeq, limit);
        }
        List<Envelope> out = new ArrayList<>(limit);
        for (Envelope e : stored) {
            if (e.seq() < busFirst) {
                out.add(e);
            }
        }
        long reached = out.isEmpty() ? afterSeq : out.get(out.size() - 1).seq();
        if (before > reached && out.size() < limit) {
            // Waited for: the seqs a writer that stopped had reserved and not used (or, had it shown
            // them, events lost with it): the cursor's resync rule covers a client that holds one.
            log.info("no event of conversation {} has a seq in {}-{} (in neither the cluster's history nor the"
                    + " store): the gap a writer that stopped left", conversationId, reached + 1, before);
        }
        for (int i = 0; i < fromBus.size() && out.size() < limit; i++) {
            out.add(fromBus.get(i));
        }
        return out;
    }

    /**
     * The bus's page after {@code afterSeq}, topped up from the store after its last entry: a writer
     * that stopped (or was cut off from the bus) may have stored, and shown its own clients, events it
     * never published. A live writer's events the store has already are the bus's a moment later.
     */
    private List<Envelope> thenUnpublished(String conversationId, long afterSeq, List<Envelope> fromBus, int limit) {
        if (fromBus.size() >= limit) {
            return fromBus;
        }
        long last = fromBus.isEmpty() ? afterSeq : fromBus.get(fromBus.size() - 1).seq();
        List<Envelope> stored = store.events(conversationId, last, limit - fromBus.size());
        if (stored.isEmpty()) {
            return fromBus;
        }
        List<Envelope> out = new ArrayList<>(fromBus.size() + stored.size());
        out.addAll(fromBus);
        out.addAll(stored);
        return out;
    }

    // ---------------------------------------------------------------- write leases

    /**
     * Makes this node the conversation's writer, or counts one more use of the lease it holds; false
     * when another node writes it. Call it holding no conversation's lock; pair it with
     * {@link #release}. Taking over from a writer that did not let go cleanly starts above every seq
     * it may have shown, and fails the run it left unfinished.
     */
    boolean hold(ConversationState c) {
        return hold(c, Phases.NONE, null);
    }

    /**
     * {@link #hold(ConversationState)}, marking where the time of a take-over goes in {@code phases},
     * with the lease taken {@code ahead} (null: asked for here), which it takes up or {@link #forgo}es.
     */
    private boolean hold(ConversationState c, Phases phases, Ahead ahead) {
        synchronized (c.leaseLock) {
            synchronized (c) {
                if (c.lease == null && c.releaseWhenSettled != null) {
                    // Let go a moment ago, its last events still on their way to Redis or the store: still this node's.
                    c.lease = c.releaseWhenSettled;
                    c.releaseWhenSettled = null;
                }
                if (c.lease != null) {
                    c.leaseHolds++;
                    forgo(ahead);
                    return true;
                }
            }
            long asked = ahead != null ? ahead.askedNanos() : System.nanoTime();
            Optional<ClusterBus.Lease> got = ahead != null ? Optional.of(ahead.lease()) : await(bus.acquire(c.id));
            if (got.isEmpty()) {
                return false;
            }
            phases.mark("lease");
            // Renewed from now on: the reads below may outlast the lease time.
            c.leaseSureUntil = asked + bus.leaseTtl().toNanos();
            c.acquiring = got.get();
            leasesAhead.remove(c.id, got.get());
            // The seqs the last writer stored or reserved, and may have shown; this node reserved those after them.
            long floor = 0;
            Fenced fenced = null;
            if (!got.get().clean()) {
                try {
                    fenced = fenced(got.get());
                } catch (RuntimeException e) {
                    c.acquiring = null;
                    throw e;
                }
                if (fenced == null) {
                    c.acquiring = null;
                    return false;
                }
                floor = fenced.lastSeq();
            }
            ClusterBus.Lease lease = fenced != null ? fenced.lease() : got.get();
            c.acquiring = lease;
            phases.mark("fence");
            // The last event here once the conversation is caught up, below the seqs the last writer reserved.
            long applied;
            // Whether the store may be behind what the bus holds (what the last writer published, unstored).
            boolean storeMayLag = true;
            try {
                long have;
                synchronized (c) {
                    have = c.lastSeq;
                }
                if (have < lease.topSeq()) {
                    // A writer that did not let go has stopped, as far as anyone can tell: waiting for its
                    // store to fill what the bus dropped would only delay the take-over.
                    catchUp(c, lease.clean() ? STORE_LAG_WAITS : 0);
                }
                List<Envelope> unpublished = List.of();
                if (!lease.clean()) {
                    // The last writer may have stored events it never published: learn them, and publish
                    // them before anything of this node's, so that the bus's history has no hole.
                    List<Envelope> stored = storedAfter(c.id, lease.topSeq() == 0 ? have
                            : Math.min(have, lease.topSeq()));
                    synchronized (c) {
                        for (Envelope e : stored) {
                            if (e.seq() > c.lastSeq) {
                                emitter.acceptLocked(c, e);
                            }
                        }
                    }
                    storeMayLag = stored.isEmpty() || stored.get(stored.size() - 1).seq() < lease.topSeq();
                    unpublished = lease.topSeq() == 0 ? List.of()
                            : stored.stream().filter(e -> e.seq() > lease.topSeq()).toList();
                }
                synchronized (c) {
                    applied = c.lastSeq;
                    c.lease = lease;
                    c.acquiring = null;
                    c.leaseHolds = 1;
                    republishLocked(c, unpublished, applied);
                    c.lastSeq = Math.max(c.lastSeq, Math.max(lease.topSeq(), floor));
                    c.reserved = Math.max(c.reserved, lease.clean() ? floor : floor + Emitter.RESERVATION);
                }
            } catch (RuntimeException e) {
                c.acquiring = null;
                letGo(lease);
                throw e;
            }
            phases.mark("reads");
            if (!lease.clean()) {
                try {
                    if (storeMayLag) {
                        Adopted adopted = adopt(c, applied);
                        phases.mark("adopt");
                        if (!adopted.stored().isDone() && !tailCovers(c, adopted.storedUpTo())) {
                            // The run's start may be among them and nowhere else: the store must have them first.
                            awaitStored(adopted.stored());
                            phases.mark("stored");
                        }
                    }
                    failAbandonedRun(c, applied, phases);
                } catch (RuntimeException e) {
                    // The lease is held all the same: the next writer that finds it unclean tries again.
                    log.warn("could not settle what the last writer of conversation {} left: {}", c.id, e.toString());
                }
            }
            return true;
        }
    }

    /**
     * Fences off the conversation's writer before this one, which did not let go cleanly and may
     * still be writing the store (cut off from the bus, or paused): raises the store's fence to the
     * lease's, so that whatever that writer stores from now on is left out, and what it was storing
     * is in before the reads that follow; and, in the same step, reads the seqs that writer stored or
     * reserved and reserves the next ones for this node. The lease under the fence the store
     * answered, and that last seq; null when the lease was lost meanwhile.
     */
    private Fenced fenced(ClusterBus.Lease lease) {
        ConversationStore.RaisedFence raised;
        try {
            raised = store.raiseFenceAndReserve(lease.conversationId(), lease.fence(), Emitter.RESERVATION);
        } catch (RuntimeException e) {
            letGo(lease);
            throw e;
        }
        if (raised.fence() == lease.fence()) {
            return new Fenced(lease, raised.lastSeq());
        }
        // The bus forgot the fence (it lost the conversation's meta): the writers after this one go on from the store's.
        if (!await(bus.raiseFence(lease, raised.fence()))) {
            return null;
        }
        return new Fenced(lease.withFence(raised.fence()), raised.lastSeq());
    }

    /** A lease under the store's fence, and the last seq the store had stored or reserved behind that fence. */
    private record Fenced(ClusterBus.Lease lease, long lastSeq) {
    }

    /**
     * Lets go of a lease this node could not take up. One acquired from a writer that did not let go
     * is left to lapse instead: released, it would mark the conversation clean at its top seq, above
     * which that writer may have shown seqs the bus never got. A reaper claims it again once it lapsed.
     */
    private void letGo(ClusterBus.Lease lease) {
        if (lease.clean()) {
            bus.release(lease);
        } else {
            log.info("left the write lease of conversation {} to lapse: the take-over failed", lease.conversationId());
        }
    }

    /** Every stored event of the conversation after {@code afterSeq}, in order. */
    private List<Envelope> storedAfter(String conversationId, long afterSeq) {
        List<Envelope> out = new ArrayList<>();
        while (true) {
            List<Envelope> page = store.events(conversationId, afterSeq, PAGE);
            out.addAll(page);
            if (page.size() < PAGE) {
                return out;
            }
            afterSeq = page.get(page.size() - 1).seq();
        }
    }

    /**
     * Publishes, in order, the events up to {@code upTo} a writer that stopped stored and did not
     * publish; the caller holds the conversation's lock and its lease.
     */
    private void republishLocked(ConversationState c, List<Envelope> unpublished, long upTo) {
        int n = 0;
        for (Envelope e : unpublished) {
            if (e.seq() <= upTo) {
                publishLocked(c, e, EventCodec.toJson(e.event()));
                n++;
            }
        }
        if (n > 0) {
            log.info("published {} of conversation {} that its last writer stored and did not publish",
                    Plural.of(n, "event"), c.id);
        }
    }

    /**
     * Applies, in order, the pages {@code read} gives of the events after the conversation's last seq
     * here, until a page is short.
     */
    private void applyPages(ConversationState c, LongFunction<List<Envelope>> read) {
        while (true) {
            long from;
            synchronized (c) {
                from = c.lastSeq;
            }
            List<Envelope> page = read.apply(from);
            synchronized (c) {
                for (Envelope e : page) {
                    if (e.seq() > c.lastSeq) {
                        emitter.acceptLocked(c, e);
                    }
                }
            }
            if (page.size() < PAGE) {
                return;
            }
        }
    }

    /**
     * Ends one use of the conversation's lease; the last one lets it go once what this node wrote
     * under it is published and stored: the next writer, told that this one let go cleanly, goes on
     * from the top seq without reading the store, and nobody would store what this node had still
     * on its way to the store if it died after letting go.
     */
    void release(ConversationState c) {
        synchronized (c) {
            if (c.lease == null || --c.leaseHolds > 0) {
                return;
            }
            c.releaseWhenSettled = c.lease;
            c.lease = null;
            settledLocked(c);
        }
    }

    /**
     * Lets go of a lease {@link #release}d, if what this node wrote under it is now published and
     * stored; the caller holds the conversation's lock (a publish was answered, or a write committed).
     */
    void settledLocked(ConversationState c) {
        ClusterBus.Lease lease = c.releaseWhenSettled;
        if (lease == null || c.publishing || c.inFlight > 0) {
            return;
        }
        c.releaseWhenSettled = null;
        // At once, not through the workers: it only sends a command, and a lease that waits for a
        // busy worker lapses unrenewed.
        letGo(c, lease, c.lastSeq);
    }

    /** Lets the lease go, the conversation's top here, {@code top}, its clean point. */
    private void letGo(ConversationState c, ClusterBus.Lease lease, long top) {
        bus.release(lease, top).whenComplete((released, e) -> {
            if (e != null || !released) {
                log.warn("the write lease of conversation {} had ended before it was released", c.id);
            }
        });
    }

    /**
     * Sends an event this node emitted to the cluster, {@code json} its event's JSON; the caller holds
     * the conversation's lock. One publish of a conversation is on its way at a time: what is emitted
     * meanwhile goes in the next one, together, so a conversation streaming faster than Redis answers
     * costs one script call per round trip rather than one per event, and its events stay in order.
     */
    void publishLocked(ConversationState c, Envelope env, String json) {
        ClusterBus.Lease lease = c.lease;
        if (lease == null) {
            // The lease was lost a moment ago and its run not stopped yet: the bus would refuse it.
            log.debug("event {} of conversation {} stays on this node: its write lease was lost", env.seq(), c.id);
            return;
        }
        ClusterBus.Publication event = new ClusterBus.Publication(env.seq(), ClusterPayload.encode(env, json));
        queued.incrementAndGet();
        if (c.publishing) {
            if (c.outgoing == null) {
                c.outgoing = new ArrayList<>();
            }
            c.outgoing.add(event);
            return;
        }
        c.publishing = true;
        send(c, lease, List.of(event));
    }

    /** Publishes {@code events} and, once answered, what was emitted meanwhile; the caller holds the lock. */
    private void send(ConversationState c, ClusterBus.Lease lease, List<ClusterBus.Publication> events) {
        CompletableFuture<ClusterBus.Published> sent;
        try {
            sent = bus.publish(lease, events);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        sent.whenCompleteAsync((published, e) -> {
            queued.addAndGet(-events.size());
            if (e != null) {
                try (LogContext.Scope ids = LogContext.open(c.id, null)) {
                    log.warn("{} of conversation {} did not reach the cluster: {}",
                            Plural.of(events.size(), "event"), c.id, e.toString());
                }
            } else if (published == ClusterBus.Published.LEASE_LOST) {
                workers.execute(LogContext.wrap(c.id, null, () -> lost(c, lease)));
            } else if (published == ClusterBus.Published.STALE) {
                try (LogContext.Scope ids = LogContext.open(c.id, null)) {
                    log.warn("the cluster refused {} of conversation {}: a later seq was published",
                            Plural.of(events.size(), "event"), c.id);
                }
            }
            synchronized (c) {
                if (c.outgoing != null) {
                    List<ClusterBus.Publication> next = c.outgoing;
                    c.outgoing = null;
                    send(c, lease, next);
                    return;
                }
                c.publishing = false;
                settledLocked(c);
            }
        }, publishAnswers);
    }

    /** Whether over half of {@link #MAX_QUEUED} events this node emitted wait for Redis. */
    boolean backedUp() {
        return queued.get() > MAX_QUEUED / 2;
    }

    /**
     * Waits while more than {@link #MAX_QUEUED} events this node emitted wait for Redis, so that a
     * runtime emitting faster than the cluster takes them is slowed to its pace; call it holding no
     * conversation's lock.
     */
    void awaitRoom() {
        while (queued.get() > MAX_QUEUED) {
            LockSupport.parkNanos(100_000);
        }
    }

    /** The node lost the conversation's lease: its run stops here; the node that takes over fails it. */
    private void lost(ConversationState c, ClusterBus.Lease lease) {
        Run run;
        synchronized (c) {
            if (c.lease != lease) {
                return;
            }
            c.lease = null;
            c.leaseHolds = 0;
            run = c.active;
        }
        log.warn("this node lost the write lease of conversation {}; {}", c.id,
                run == null ? "it writes no more there" : "its run " + run.request.runId() + " stops here");
        if (run != null) {
            run.abandon();
            // Whoever took the lease over failed the run; if nobody did (the bus lost its leases), this node does.
            timer.schedule(() -> takeovers.execute(LogContext.wrap(c.id, null,
                            () -> takeOver(c.id, "its writer lost the lease"))),
                    bus.leaseTtl().toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Renews the leases this node holds; reads them without the conversations' locks, never waiting. */
    private void renewAll() {
        for (ConversationState c : table.all()) {
            // A lease let go while its last events are on their way is still this node's: a run
            // that starts meanwhile holds it again, so it must not lapse in between.
            ClusterBus.Lease held = c.lease;
            ClusterBus.Lease settling = c.releaseWhenSettled;
            ClusterBus.Lease lease = held != null ? held : settling != null ? settling : c.acquiring;
            if (lease != null) {
                long asked = System.nanoTime();
                bus.renew(lease).whenComplete((renewed, e) -> {
                    if (e == null && !renewed) {
                        workers.execute(LogContext.wrap(c.id, null, () -> lost(c, lease)));
                    } else if (e == null
                            && (c.lease == lease || c.releaseWhenSettled == lease || c.acquiring == lease)) {
                        // A race with another renewal's answer at worst keeps the earlier time: safe.
                        c.leaseSureUntil = Math.max(c.leaseSureUntil, asked + bus.leaseTtl().toNanos());
                    }
                });
            }
        }
        // Leases acquired for take-overs whose conversations are still loading.
        leasesAhead.values().forEach(lease -> bus.renew(lease).whenComplete((renewed, e) -> {
            if (e == null && !renewed) {
                leasesAhead.remove(lease.conversationId(), lease);
            }
        }));
    }

    /**
     * Lets go of the leases this node could not renew within their time (the bus is out of reach,
     * or answers too late): the bus may have let another node take them over by now, and a writer
     * that goes on would show its clients events that the cluster never gets.
     */
    private void dropLapsedLeases() {
        long now = System.nanoTime();
        for (ConversationState c : table.all()) {
            ClusterBus.Lease lease = c.lease;
            if (lease == null || now - c.leaseSureUntil < 0) {
                continue;
            }
            log.warn("this node could not renew the write lease of conversation {} within {} ms", c.id,
                    bus.leaseTtl().toMillis());
            workers.execute(LogContext.wrap(c.id, null, () -> lost(c, lease)));
        }
    }

    /**
     * Takes over conversations whose writer stopped renewing its lease, to fail its run: as many as
     * this node has take-over threads idle, so that the nodes left share a dead node's conversations.
     */
    private void reap() {
        dropLapsedLeases();
        int idle = TAKEOVER_THREADS - takingOver.get();
        if (idle <= 0) {
            return;
        }
        long asked = System.nanoTime();
        bus.takeExpired(idle).whenComplete((taken, e) -> {
            if (e != null) {
                log.debug("could not take the expired write leases", e);
                return;
            }
            for (ClusterBus.Taken t : taken) {
                // Taken where it was found lapsed, before the conversation loads: renewed from now on.
                String id = t.lease().conversationId();
                leasesAhead.put(id, t.lease());
                Ahead ahead = new Ahead(asked, t.lease());
                takingOver.incrementAndGet();
                takeovers.execute(LogContext.wrap(id, null, () -> {
                    try {
                        takeOver(id, "node " + t.lapsedNodeId() + " stopped renewing its write lease", ahead);
                    } finally {
                        takingOver.decrementAndGet();
                    }
                }));
            }
        });
    }

    /**
     * Holds and lets go of the conversation's lease, which fails a run its last writer left
     * unfinished; nothing when another node writes it (it did that already).
     */
    void takeOver(String conversationId, String why) {
        takeOver(conversationId, why, null);
    }

    /** {@link #takeOver(String, String)} with the lease taken {@code ahead} of loading the conversation (may be null). */
    private void takeOver(String conversationId, String why, Ahead ahead) {
        Phases phases = new Phases();
        boolean loaded = false;
        try {
            ConversationState c = table.load(conversationId);
            loaded = true;
            phases.mark("load");
            if (hold(c, phases, ahead)) {
                release(c);
                if (phases.acquired) {
                    log.info("took conversation {} over ({}) in {}", conversationId, why, phases);
                } else {
                    // An old lease of this node's that the index still named: it holds a newer one.
                    log.debug("conversation {} needed no take-over ({}): this node writes it", conversationId, why);
                }
            }
        } catch (RuntimeException e) {
            if (!loaded) {
                forgo(ahead);
            }
            log.warn("could not take over conversation {} ({}): {}", conversationId, why, e.getMessage());
        }
    }

    /**
     * A lease taken before the hold that takes it up (it is in {@link #leasesAhead} meanwhile):
     * {@code askedNanos} when it was asked for.
     */
    private record Ahead(long askedNanos, ClusterBus.Lease lease) {
    }

    /**
     * Stops renewing a lease taken ahead that no hold takes up, leaving it to lapse: released, it
     * would mark the conversation clean at its top seq, above which the writer before may have shown
     * seqs the bus never got. A reaper takes it again once it lapsed.
     */
    private void forgo(Ahead ahead) {
        if (ahead != null && leasesAhead.remove(ahead.lease().conversationId(), ahead.lease())) {
            log.debug("left the lease of conversation {} taken for a take-over to lapse",
                    ahead.lease().conversationId());
        }
    }

    /**
     * Queues for the store what the conversation's last writer published, up to {@code upTo}, and
     * may not have stored before it stopped (events above the store's last one, with their messages
     * and approval states), so that nothing a client saw is lost with the writer; holding the lease.
     * The take-over need not wait for them to be stored before it fails the run: its store writer
     * stores them first, and lets the lease go only once they are. A conversation the store does
     * not know yet is left to the bus's history: its owner is not known here.
     */
    private Adopted adopt(ConversationState c, long upTo) {
        synchronized (c) {
            if (!c.persisted) {
                return new Adopted(Long.MAX_VALUE, CompletableFuture.completedFuture(null));
            }
        }
        long storedUpTo = store.lastEventSeq(c.id);
        long after = storedUpTo;
        List<Envelope> events = new ArrayList<>();
        reading:
        while (true) {
            ClusterBus.History h = await(bus.history(c.id, after, PAGE));
            for (ClusterBus.Entry e : h.entries()) {
                if (e.seq() > upTo) {
                    break reading;
                }
                events.add(ClusterPayload.decode(c.id, e.seq(), e.payload()));
                after = e.seq();
            }
            if (h.entries().size() < PAGE) {
                break;
            }
        }
        if (events.isEmpty()) {
            return new Adopted(storedUpTo, CompletableFuture.completedFuture(null));
        }
        // Prepared here (it may read approvals from the store), not on the store writer's thread.
        StoreBatch rows = new StoreBatch();
        Map<String, ApprovalRecord> approvals = new HashMap<>();
        for (Envelope e : events) {
            emitter.adoptInto(rows, e, approvals);
        }
        CompletableFuture<Void> stored = new CompletableFuture<>();
        synchronized (c) {
            // Through the store writer, in its queue's order: ahead of the run's failure and whatever this
            // node writes next, so the store never holds a later event of the conversation without these.
            emitter.writeLocked(c, batch -> {
                for (int i = 0; i < rows.events().size(); i++) {
                    batch.addEvent(rows.events().get(i), rows.prepared(i));
                }
                rows.messages().forEach(batch::addMessage);
                rows.approvals().forEach(batch::putApproval);
            }, () -> stored.complete(null));
        }
        log.info("storing {} events of conversation {} that its last writer published and did not store",
                events.size(), c.id);
        return new Adopted(storedUpTo, stored);
    }

    /**
     * What {@link #adopt} queued for the store: {@code storedUpTo}, the store's last event of the
     * conversation before; {@code stored}, done once the queued events are stored.
     */
    private record Adopted(long storedUpTo, CompletableFuture<Void> stored) {
    }

    /** Whether the conversation's tail here holds every event after {@code seq}. */
    private static boolean tailCovers(ConversationState c, long seq) {
        synchronized (c) {
            long tailFirst = c.tail.isEmpty() ? c.lastSeq + 1 : c.tail.peekFirst().seq();
            return tailFirst <= seq + 1;
        }
    }

    private static void awaitStored(CompletableFuture<Void> stored) {
        try {
            stored.get(STORE_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the adopted events were stored", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("the adopted events were not stored within " + STORE_WAIT_SECONDS + " s", e);
        }
    }

    /**
     * Fails the run the conversation's last writer left unfinished, if any, {@code lastSeq} the last of
     * its events (the seqs it reserved above are no events); holding its lease. The last run start or
     * end up to {@code lastSeq} tells: this node's tail holds the newest events it applied, and
     * the store, which holds by now every event before them, the rest.
     */
    private void failAbandonedRun(ConversationState c, long lastSeq, Phases phases) {
        Envelope boundary = null;
        long tailFirst;
        synchronized (c) {
            if (c.active != null) {
                return;
            }
            tailFirst = c.tail.isEmpty() ? Long.MAX_VALUE : c.tail.peekFirst().seq();
            for (Iterator<Envelope> newestFirst = c.tail.descendingIterator(); newestFirst.hasNext(); ) {
                Envelope e = newestFirst.next();
                if (e.seq() <= lastSeq && e.event().boundsRun()) {
                    boundary = e;
                    break;
                }
            }
        }
        if (boundary == null && tailFirst > 1) {
            boundary = store.lastRunBoundary(c.id, Math.min(lastSeq, tailFirst - 1)).orElse(null);
        }
        phases.mark("run");
        if (boundary == null || boundary.event().kind() != Event.Kind.RUN_STARTED) {
            return;
        }
        String runId = boundary.runId();
        synchronized (c) {
            emitter.emitLocked(c, null, runId, new Event.RunFailed(ErrorCode.UNAVAILABLE,
                    "the gateway node running this run stopped; start it again"), null);
            c.remoteRunId = null;
        }
        phases.mark("failure");
        log.info("run {} of conversation {} was left unfinished by a node that stopped; marked failed", runId, c.id);
    }

    /** Where the time of a take-over went: each phase's milliseconds, for its log line. */
    private static class Phases {
        /** Marks nothing: a hold that is no take-over. */
        static final Phases NONE = new Phases() {
            @Override
            void mark(String phase) {
            }
        };

        private final long start = System.nanoTime();
        private final StringBuilder marks = new StringBuilder();
        private long last = start;
        /** Whether the hold acquired the lease (rather than finding this node holding it). */
        boolean acquired;

        /** Ends the phase named {@code phase}, begun at the last mark. */
        void mark(String phase) {
            acquired |= phase.equals("lease");
            long now = System.nanoTime();
            marks.append(marks.isEmpty() ? "" : ", ").append(phase).append(' ')
                    .append(TimeUnit.NANOSECONDS.toMillis(now - last));
            last = now;
        }

        @Override
        public String toString() {
            return TimeUnit.NANOSECONDS.toMillis(last - start) + " ms (" + marks + ")";
        }
    }

    // ---------------------------------------------------------------- approvals of another node's run

    /**
     * Sends a decision to the node that owns the conversation's run; false when no other node does
     * (the caller decides here). The subscriber hears a refusal from the owner; {@code done} (may be
     * null) runs when the owner took the decision.
     */
    boolean forward(ConversationState c, Command.DecideApproval cmd, Subscriber from, Runnable done) {
        Optional<String> owner = await(bus.holder(c.id));
        if (owner.isEmpty() || owner.get().equals(bus.nodeId())) {
            return false;
        }
        String id = Ids.next("fwd");
        Forward f = new Forward(from, done);
        forwards.put(id, f);
        timer.schedule(() -> {
            if (forwards.remove(id, f)) {
                from.reject(GatewayError.of(ErrorCode.UNAVAILABLE, "node " + owner.get()
                        + ", which runs the run of approval " + cmd.approvalId() + ", did not answer; try again"));
            }
        }, FORWARD_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        ObjectNode m = Json.object();
        m.put("type", "decide").put("id", id).put("reply_to", bus.nodeId()).put("approval_id", cmd.approvalId())
                .put("approved", cmd.approved()).put("feedback", cmd.feedback())
                .put("principal", from.principal().id()).put("anonymous", from.principal().anonymous())
                .put("via", from.dialect());
        if (cmd.payload() != null) {
            m.set("payload", cmd.payload());
        }
        send(owner.get(), m);
        return true;
    }

    /**
     * Sends an approval request outside any run (A2H) to the node that writes the conversation, which
     * shows it there as a node alone would, even while a run streams; empty when no other node writes
     * the conversation (the caller asks here). The answer is the stored approval, or fails when that
     * node refused or did not answer.
     */
    Optional<CompletableFuture<ApprovalRecord>> askWriter(ConversationState c, ApprovalRequest request) {
        Optional<String> writer = await(bus.holder(c.id));
        if (writer.isEmpty() || writer.get().equals(bus.nodeId())) {
            return Optional.empty();
        }
        String id = Ids.next("ask");
        CompletableFuture<ApprovalRecord> answer = new CompletableFuture<>();
        asks.put(id, answer);
        timer.schedule(() -> {
            if (asks.remove(id, answer)) {
                answer.completeExceptionally(new ClusterUnavailable("node " + writer.get()
                        + ", which writes conversation " + c.id + ", did not answer an approval request", null));
            }
        }, FORWARD_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        ObjectNode m = Json.object();
        m.put("type", "ask").put("id", id).put("reply_to", bus.nodeId()).put("conversation_id", c.id)
                .put("tool_call_id", request.toolCallId()).put("tool_name", request.toolName())
                .put("description", request.description()).put("reasoning", request.reasoning())
                .put("risk", request.risk().name());
        if (request.arguments() != null) {
            m.set("arguments", request.arguments());
        }
        send(writer.get(), m);
        return Optional.of(answer);
    }

    /** An approval request another node sent here: asked as this node's own, the answer sent back. */
    private void askForwarded(JsonNode m) {
        ApprovalRequest request;
        try {
            request = new ApprovalRequest(m.path("tool_call_id").asText(), m.path("tool_name").asText(),
                    textOrNull(m, "description"), m.has("arguments") ? m.get("arguments") : null,
                    textOrNull(m, "reasoning"), RiskLevel.valueOf(m.path("risk").asText()));
        } catch (RuntimeException bad) {
            log.warn("ignored an approval request from node {} this node does not read: {}",
                    m.path("reply_to").asText(), bad.getMessage());
            return;
        }
        approvals.requestApproval(m.path("conversation_id").asText(), request).whenComplete((asked, e) -> {
            ObjectNode reply = Json.object();
            reply.put("type", "asked").put("id", m.path("id").asText())
                    .put("conversation_id", m.path("conversation_id").asText());
            if (e != null) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                reply.put("error", String.valueOf(cause.getMessage()));
            } else {
                reply.put("approval_id", asked.approvalId()).put("seq", asked.seq()).put("run_id", asked.runId())
                        .put("event", EventCodec.toJson(asked.request()));
            }
            send(m.path("reply_to").asText(), reply);
        });
    }

    /** The answer to an approval request this node sent to another. */
    private void asked(JsonNode m) {
        CompletableFuture<ApprovalRecord> answer = asks.remove(m.path("id").asText());
        if (answer == null) {
            return;
        }
        if (m.has("error")) {
            answer.completeExceptionally(new IllegalStateException(m.path("error").asText()));
            return;
        }
        try {
            Event.ApprovalRequested event = (Event.ApprovalRequested) EventCodec.fromJson(m.path("event").asText());
            answer.complete(new ApprovalRecord(m.path("conversation_id").asText(), textOrNull(m, "run_id"),
                    m.path("seq").asLong(), event, ApprovalRecord.Status.PENDING, null, null, null));
        } catch (RuntimeException bad) {
            answer.completeExceptionally(bad);
        }
    }

    private static String textOrNull(JsonNode m, String field) {
        return m.path(field).isTextual() ? m.path(field).asText() : null;
    }

    private void send(String node, ObjectNode message) {
        bus.send(node, message.toString().getBytes(StandardCharsets.UTF_8)).exceptionally(e -> {
            log.warn("could not send a message to node {}: {}", node, e.toString());
            return null;
        });
    }

    /** A message from another node, on the bus's I/O thread. */
    private void received(byte[] bytes) {
        JsonNode m;
        try {
            m = Json.parseStrict(new String(bytes, StandardCharsets.UTF_8));
        } catch (Exception e) {
            log.warn("ignored a message from another node that is not JSON");
            return;
        }
        switch (m.path("type").asText()) {
            case "decide" -> workers.execute(() -> decideForwarded(m));
            case "ask" -> workers.execute(LogContext.wrap(m.path("conversation_id").asText(null), null,
                    () -> askForwarded(m)));
            case "asked" -> asked(m);
            case "decided" -> {
                Forward f = forwards.remove(m.path("id").asText());
                if (f != null) {
                    JsonNode error = m.path("error");
                    if (error.isObject()) {
                        f.from.reject(GatewayError.of(ErrorCode.valueOf(error.path("code").asText()),
                                error.path("message").asText()));
                    } else if (f.done != null) {
                        f.done.run();
                    }
                }
            }
            default -> log.warn("ignored a message from another node of type '{}'", m.path("type").asText());
        }
    }

    private void decideForwarded(JsonNode m) {
        Principal by = new Principal(m.path("principal").asText(), m.path("anonymous").asBoolean(), null);
        JsonNode payload = m.has("payload") ? m.get("payload") : null;
        String feedback = m.path("feedback").isTextual() ? m.path("feedback").asText() : null;
        // Where it was decided, for metrics: a name from the sending node, kept to a fixed set's shape.
        String via = m.path("via").asText("operator");
        approvals.decideAsOperator(m.path("approval_id").asText(), m.path("approved").asBoolean(), feedback, payload, by,
                        via.matches("[a-z0-9_-]{1,32}") ? via : "other")
                .whenComplete((error, e) -> {
                    ObjectNode reply = Json.object();
                    reply.put("type", "decided").put("id", m.path("id").asText());
                    GatewayError refusal = e != null ? GatewayError.of(ErrorCode.INTERNAL, "the decision failed") : error;
                    if (refusal != null) {
                        reply.putObject("error").put("code", refusal.code().name()).put("message", refusal.message());
                    }
                    send(m.path("reply_to").asText(), reply);
                });
    }

    // ---------------------------------------------------------------- limits and health

    /** Counts one more under {@code key} in the cluster's window of {@code window}; the count so far. */
    long count(String key, Duration window) {
        return await(bus.count(key, window));
    }

    /** Null when the bus answers, else what is wrong. */
    public CompletableFuture<String> problem(Duration timeout) {
        return bus.problem(timeout);
    }

    private static <T> T await(CompletableFuture<T> f) {
        try {
            return f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ClusterUnavailable("interrupted while waiting for the cluster", e);
        } catch (ExecutionException e) {
            throw new ClusterUnavailable("the cluster's bus failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new ClusterUnavailable("the cluster's bus did not answer within " + WAIT.toSeconds() + " s", e);
        }
    }

    /** The bus could not be reached or did not answer: the operation did not happen. */
    static final class ClusterUnavailable extends RuntimeException {
        ClusterUnavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** A decision sent to another node, waiting for its answer. */
    private record Forward(Subscriber from, Runnable done) {
    }
}
