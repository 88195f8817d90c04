package dev.switchboard.core;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.internal.Approvals;
import dev.switchboard.core.internal.ClusterLink;
import dev.switchboard.core.internal.ConversationService;
import dev.switchboard.core.internal.ConversationTable;
import dev.switchboard.core.internal.Emitter;
import dev.switchboard.core.internal.HubMetrics;
import dev.switchboard.core.internal.HubTraces;
import dev.switchboard.core.internal.Replay;
import dev.switchboard.core.internal.Runs;
import dev.switchboard.core.internal.StoreWriter;
import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ApprovalRequest;
import dev.switchboard.core.spi.ClusterBus;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.Conversations;
import dev.switchboard.core.spi.OperatorApprovals;

import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.OpenTelemetry;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The conversation hub: per conversation, its subscribers, its one active run, its pending
 * approvals and its event log. Every command from every dialect comes here; every event of
 * every runtime leaves here. The hub assembles the parts that do this work, each behind what a
 * module may use of it ({@link #conversations()}, {@link #operatorApprovals()}), and stops them.
 *
 * <p>Threads: {@link #submit} and {@link #disconnected} never block the caller (commands
 * run on the hub's workers, which may read the store). An event gets its {@code seq} under the
 * conversation's lock and, under the same lock, goes to the conversation's in-memory tail and to
 * every subscriber's queue, on the thread that emits it; a store writer stores it behind, in
 * batches. The tail holds every event not yet stored, so a joining or resuming subscriber reads
 * the store up to the tail and the tail after it, under the lock, and misses nothing.
 *
 * <p>Cursors across a crash: before an event with a {@code seq} above the conversation's
 * reservation reaches anyone, the hub stores a new reservation (on the emitting thread, or, for a
 * run that starts on the thread that read its request, such as a new conversation's, on a worker
 * while the run's events wait unseen), so after a {@code kill -9} the
 * conversation's next {@code seq} comes after every one a client may hold, and the events lost
 * with the crash leave a gap. A cursor that names no event (one in the gap) is answered with
 * everything from the start of the last run stored before it: a resync the client can splice in
 * by {@code seq}, never a silent skip.
 */
public final class ConversationHub implements Conversations, OperatorApprovals, AutoCloseable {
    private final ConversationStore store;
    private final AgentRuntime runtime;
    private final StoreWriter writer;
    private final HubMetrics metrics;
    private final ExecutorService workers;
    private final ScheduledExecutorService timer;
    private final Emitter emitter;
    private final Runs runs;
    private final Approvals approvals;
    private final ConversationService conversations;
    /** The cluster this node is part of; null when it runs alone. */
    private final ClusterLink cluster;
    private CompletableFuture<Void> shutdown;
    /**
     * How long a stop waits for the seq reservations workers are storing, after the runs' grace: a
     * write of a few microseconds, unless the store fails (see Emitter.reserveBehind).
     */
    private static final Duration RESERVATIONS_WAIT = Duration.ofSeconds(10);

    private ConversationHub(Builder b) {
        this.store = Objects.requireNonNull(b.store, "store");
        this.runtime = Objects.requireNonNull(b.runtime, "runtime");
        if (b.cluster != null && !store.shared()) {
            throw new IllegalArgumentException("a cluster needs a store its nodes share, such as PostgreSQL");
        }
        this.metrics = new HubMetrics(b.meters);
        this.writer = new StoreWriter(store, metrics);
        AtomicInteger n = new AtomicInteger();
        this.workers = Executors.newFixedThreadPool(b.workerThreads, r -> {
            Thread t = new Thread(r, "switchboard-hub-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "switchboard-hub-timer");
            t.setDaemon(true);
            return t;
        });
        ConversationTable table = new ConversationTable(store, b.clock, runtime.readsHistory());
        this.cluster = b.cluster == null ? null : new ClusterLink(b.cluster, store, workers, timer);
        this.emitter = new Emitter(store, writer, workers, b.clock, table, cluster);
        HubTraces traces = new HubTraces(b.openTelemetry, b.recordPrincipal);
        Replay replay = new Replay(store, table, cluster, metrics, traces);
        this.runs = new Runs(store, runtime, b.moderation, new RateLimiter(b.runsPerMinute, b.clock), b.clock, table,
                emitter, replay, cluster, metrics, traces);
        this.approvals = new Approvals(store, workers, b.clock, table, emitter, runs, metrics);
        this.conversations = new ConversationService(workers, table, replay, runs, approvals);
        if (cluster != null) {
            table.joinCluster(cluster);
            cluster.start(table, emitter, approvals);
        }
        timer.scheduleWithFixedDelay(() -> writer.run(table::evictIdle), 1, 1, TimeUnit.MINUTES);
        runs.failInterruptedRuns();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The node's link to its cluster, when it is part of one. */
    public Optional<ClusterLink> cluster() {
        return Optional.ofNullable(cluster);
    }

    /** The store behind the hub. */
    public ConversationStore store() {
        return store;
    }

    /** The hub as connections use it, for a module that must not hold the hub itself. */
    public Conversations conversations() {
        return conversations;
    }

    /** The hub's approvals as an operator side uses them, for a module that must not hold the hub itself. */
    public OperatorApprovals operatorApprovals() {
        return approvals;
    }

    @Override
    public int activeRuns() {
        return conversations.activeRuns();
    }

    @Override
    public void submit(Command command, Subscriber from) {
        conversations.submit(command, from);
    }

    @Override
    public void disconnected(Subscriber s) {
        conversations.disconnected(s);
    }

    @Override
    public CompletableFuture<ApprovalRecord> requestApproval(String conversationId, ApprovalRequest request) {
        return approvals.requestApproval(conversationId, request);
    }

    @Override
    public CompletableFuture<GatewayError> decideAsOperator(String approvalId, boolean approved, String feedback,
                                                            JsonNode payload, Principal by) {
        return approvals.decideAsOperator(approvalId, approved, feedback, payload, by);
    }

    @Override
    public List<ApprovalRecord> pendingApprovals(int limit, int offset) {
        return approvals.pendingApprovals(limit, offset);
    }

    @Override
    public CompletableFuture<Void> flushed() {
        return approvals.flushed();
    }

    /**
     * Refuses new runs, suspends at once every run that only waits for an approval (and any run
     * that comes to wait for one), lets the other runs finish within {@code grace}, fails the rest,
     * then stores everything queued. The store stays open: its owner closes it.
     */
    public synchronized CompletableFuture<Void> shutdown(Duration grace) {
        if (shutdown != null) {
            return shutdown;
        }
        runs.refuseNew();
        shutdown = CompletableFuture.runAsync(() -> {
            runs.stopAll(grace);
            // A run that started on an event loop may have ended with its events waiting for their reservation.
            emitter.awaitReservations(RESERVATIONS_WAIT);
            writer.stop().join();
            emitter.releaseReservations();
            timer.shutdownNow();
            workers.shutdown();
            runtime.close();
        }, r -> {
            Thread t = new Thread(r, "switchboard-hub-shutdown");
            t.setDaemon(true);
            t.start();
        });
        return shutdown;
    }

    @Override
    public void close() {
        shutdown(Duration.ZERO).join();
    }

    /** Builds a hub; {@link #store} and {@link #runtime} are required. */
    public static final class Builder {
        private ConversationStore store;
        private AgentRuntime runtime;
        private Moderation moderation = Moderation.disabled();
        private LongSupplier clock = System::currentTimeMillis;
        private int workerThreads = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
        private int runsPerMinute;
        private ClusterBus cluster;
        private MeterRegistry meters = HubMetrics.none();
        private OpenTelemetry openTelemetry = OpenTelemetry.noop();
        private boolean recordPrincipal;

        private Builder() {
        }

        /** Where the hub's meters go (docs/observability.md); default: nowhere. */
        public Builder meters(MeterRegistry registry) {
            this.meters = Objects.requireNonNull(registry);
            return this;
        }

        /** Where the hub's spans go (docs/observability.md); default: nowhere. */
        public Builder openTelemetry(OpenTelemetry otel) {
            this.openTelemetry = Objects.requireNonNull(otel);
            return this;
        }

        /** Whether a run's span names the principal's subject ({@code enduser.id}); default: no. */
        public Builder recordPrincipal(boolean record) {
            this.recordPrincipal = record;
            return this;
        }

        /** Joins the hub to a cluster over this bus (its store must be {@link ConversationStore#shared}); default: alone. */
        public Builder cluster(ClusterBus bus) {
            this.cluster = bus;
            return this;
        }

        public Builder store(ConversationStore store) {
            this.store = store;
            return this;
        }

        public Builder runtime(AgentRuntime runtime) {
            this.runtime = runtime;
            return this;
        }

        /** Moderation of user messages; default: none. */
        public Builder moderation(Moderation moderation) {
            this.moderation = Objects.requireNonNull(moderation);
            return this;
        }

        /** Epoch-millisecond clock for timestamps; default: the system clock. */
        public Builder clock(LongSupplier clock) {
            this.clock = Objects.requireNonNull(clock);
            return this;
        }

        /** Threads that run commands and runtime callbacks; default: max(4, 2 × cores). */
        public Builder workerThreads(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("workerThreads must be at least 1, got " + n);
            }
            this.workerThreads = n;
            return this;
        }

        /** Runs one client may start a minute (see {@link Subscriber#clientKey()}); 0, the default, is unlimited. */
        public Builder runsPerMinute(int n) {
            if (n < 0) {
                throw new IllegalArgumentException("runsPerMinute must be >= 0, got " + n);
            }
            this.runsPerMinute = n;
            return this;
        }

        public ConversationHub build() {
            return new ConversationHub(this);
        }
    }
}
