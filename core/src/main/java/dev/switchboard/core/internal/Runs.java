package dev.switchboard.core.internal;

import dev.switchboard.core.Command;
import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.DeliveryBurst;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Ids;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.LogContext;
import dev.switchboard.core.Moderation;
import dev.switchboard.core.Principal;
import dev.switchboard.core.RateLimiter;
import dev.switchboard.core.Role;
import dev.switchboard.core.Subscriber;
import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.ApprovalDecision;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ConversationRecord;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.RunRequest;
import dev.switchboard.core.spi.StoreBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

/**
 * The hub's runs: one at a time per conversation, started by a client (moderated and rate
 * limited), cancelled by it, continued when its approvals are answered (in the same run, or in a
 * new one when the run did not survive a restart), and stopped when the gateway stops.
 */
public final class Runs {
    /** Logged under the hub's name, as every part of the hub logs. */
    private static final Logger log = LoggerFactory.getLogger(ConversationHub.class);

    final AgentRuntime runtime;
    final Emitter emitter;
    final ConversationTable table;
    final LongSupplier clock;
    final AtomicInteger activeRuns = new AtomicInteger();
    private final ConversationStore store;
    private final Replay replay;
    private final Moderation moderation;
    private final RateLimiter runLimiter;
    /** The cluster this node is part of; null when it runs alone. */
    final ClusterLink cluster;
    final HubMetrics metrics;
    final HubTraces traces;
    /**
     * Seqs a conversation must have reserved and unused for a run to start on the thread that
     * received its request ({@link #startRunHere}) with no reservation on the way: a runtime that
     * starts there plays little before its own threads go on (the demo: at most 256 steps). With
     * fewer, a worker stores the next reservation while the run starts, as for a new conversation.
     */
    private static final long SEQS_FOR_A_RUN_HERE = 4_096;
    /**
     * How long a run asked for waits for the lease while this node knows of a run going on there,
     * reading what the cluster has every {@link #CATCH_UP_EVERY_MS}: its client may have seen that
     * run end on its node before the end reached Redis, which a node whose threads wait for a core
     * publishes some hundreds of milliseconds late.
     */
    private static final long WAIT_WHILE_A_RUN_GOES_ON_MS = 1_000;
    private static final long CATCH_UP_EVERY_MS = 200;
    /**
     * How long it waits once no run is going on there: a writer lets go once its run's events are
     * stored, and under the cluster soak PostgreSQL took up to 2.7 s for one write, so a run's last
     * events that queued behind such a write are stored up to twice that after its client saw them.
     */
    private static final long WAIT_AFTER_A_RUN_MS = 6_000;
    private static final long HOLD_PAUSE_MS = 50;
    private volatile boolean shuttingDown;

    public Runs(ConversationStore store, AgentRuntime runtime, Moderation moderation, RateLimiter runLimiter,
                LongSupplier clock, ConversationTable table, Emitter emitter, Replay replay, ClusterLink cluster,
                HubMetrics metrics, HubTraces traces) {
        this.cluster = cluster;
        this.metrics = metrics;
        this.traces = traces;
        this.store = store;
        this.runtime = runtime;
        this.moderation = moderation;
        this.runLimiter = runLimiter;
        this.clock = clock;
        this.table = table;
        this.emitter = emitter;
        this.replay = replay;
        metrics.activeRuns(activeRuns::get);
    }

    /** Runs in progress. */
    public int activeRuns() {
        return activeRuns.get();
    }

    /** Whether the gateway is stopping: no run starts from now on. */
    boolean shuttingDown() {
        return shuttingDown;
    }

    /**
     * Ends the runs the store shows started and never ended (the gateway stopped under them,
     * even with kill -9) with a RunFailed a resuming client sees. Their pending approvals stay
     * pending: answered, they continue the work in a new run.
     */
    public void failInterruptedRuns() {
        if (cluster != null) {
            // Another node may be running them: only a writer that stopped without letting go is failed.
            for (Envelope started : store.unfinishedRuns()) {
                try (LogContext.Scope ids = LogContext.open(started.conversationId(), started.runId())) {
                    cluster.takeOver(started.conversationId(), "its run " + started.runId()
                            + " was not stored as ended");
                }
            }
            return;
        }
        for (Envelope started : store.unfinishedRuns()) {
            ConversationState c = table.load(started.conversationId());
            synchronized (c) {
                c.newestRunStart = Math.max(c.newestRunStart, started.seq());
                emitter.emitLocked(c, null, started.runId(), new Event.RunFailed(ErrorCode.UNAVAILABLE,
                        "the gateway stopped while this run was active; start it again"), null);
            }
            try (LogContext.Scope ids = LogContext.open(started.conversationId(), started.runId())) {
                log.info("run {} of conversation {} was interrupted by a stop of the gateway; marked failed",
                        started.runId(), started.conversationId());
            }
        }
    }

    public void startRun(Command.StartRun cmd, Subscriber from) {
        ConversationState c = table.access(cmd.conversationId(), from, true).orElse(null);
        if (c == null) {
            return;
        }
        startRun(c, cmd, from, newMessages(c, cmd.messages(), false));
    }

    /**
     * Starts the run here, on the thread that received its request, when nothing on the way waits:
     * the node runs alone, the conversation is in memory or the store surely lacks it (a new one),
     * memory tells which of the request's messages are new, the store writer's queue has room for a
     * run's events, and the runtime says its start waits on nothing. False, having done nothing,
     * otherwise: the caller then hands the command to a worker ({@link #startRun(Command.StartRun, Subscriber)}).
     * A short run of a computing runtime is then played and written to its client by the thread
     * that read its request, as a plain server would answer it, and a model's request leaves from it.
     *
     * <p>When the conversation's reserved seqs run low (a new conversation has none), a worker
     * stores the next reservation meanwhile ({@link Emitter#reserveBehind}): the run's events wait,
     * unseen, until it is stored, which it mostly is before a model's first token comes back.
     */
    public boolean startRunHere(Command.StartRun cmd, Subscriber from) {
        if (cluster != null || shuttingDown || !emitter.hasRoom() || !runtime.startsWithoutWaiting(cmd.messages())) {
            return false;
        }
        ConversationState c = table.accessInMemory(cmd.conversationId(), from);
        if (c == null) {
            return false;
        }
        List<InputMessage> fresh = newMessages(c, cmd.messages(), true);
        if (fresh == null) {
            return false;
        }
        long reserveUpTo = 0;
        synchronized (c) {
            if (c.reserving == 0 && c.reserved - c.lastSeq < SEQS_FOR_A_RUN_HERE) {
                reserveUpTo = c.lastSeq + Emitter.RESERVATION;
                c.reserving = reserveUpTo;
            }
        }
        boolean started = false;
        try {
            started = startRun(c, cmd, from, fresh);
        } finally {
            if (reserveUpTo != 0) {
                reserveUnlessUnneeded(c, reserveUpTo, started);
            }
        }
        return true;
    }

    /**
     * After a start here that marked a reservation on its way: has a worker store it, unless the run
     * did not start and nothing waits for it (a refused start stores nothing).
     */
    private void reserveUnlessUnneeded(ConversationState c, long upTo, boolean started) {
        synchronized (c) {
            if (!started && c.unreserved == null && c.reserving == upTo) {
                c.reserving = 0;
                return;
            }
        }
        emitter.reserveBehind(c);
    }

    /** Starts the run unless refused (the subscriber told why); true when it started. */
    private boolean startRun(ConversationState c, Command.StartRun cmd, Subscriber from, List<InputMessage> fresh) {
        if (fresh.stream().noneMatch(m -> m.role() == Role.USER || m.role() == Role.TOOL)) {
            from.reject(GatewayError.field(ErrorCode.MISSING_FIELD, "messages",
                    "a run needs a new user message (or a tool result); every message given is already in the conversation"));
            return false;
        }
        for (InputMessage m : fresh) {
            if (m.role() == Role.USER) {
                Optional<String> word = moderation.firstBlocked(m.content());
                if (word.isPresent()) {
                    from.reject(new GatewayError(ErrorCode.MODERATION, "the message contains prohibited content",
                            Map.of("blocked_pattern", "profanity")));
                    return false;
                }
            }
        }
        Principal principal = from.principal();
        if (cluster != null && !holdForRun(c, from)) {
            return false;
        }
        boolean started = false;
        // The run's start and what its runtime plays at once reach its subscribers in one burst.
        try (DeliveryBurst burst = DeliveryBurst.open()) {
            started = start(c, cmd, from, principal, fresh);
        } finally {
            if (cluster != null && !started) {
                cluster.release(c);
            }
        }
        return started;
    }

    /**
     * In a cluster: makes this node the conversation's writer for a run, counting the run against
     * the client's limit across the cluster; false (the subscriber told why) when another node runs
     * one there, the limit is reached or the cluster cannot be reached.
     */
    private boolean holdForRun(ConversationState c, Subscriber from) {
        try {
            if (!holdSoon(c)) {
                replay.subscribe(c, from, -1, true);
                String runId;
                synchronized (c) {
                    runId = c.remoteRunId;
                }
                from.reject(new GatewayError(ErrorCode.BUSY, "a run is already active in conversation " + c.id
                        + " (on another gateway node)", runId == null ? Map.of() : Map.of("run_id", runId)));
                return false;
            }
            int perMinute = runLimiter.perMinute();
            if (perMinute > 0 && cluster.count("runs:" + from.clientKey(), Duration.ofMinutes(1)) > perMinute) {
                cluster.release(c);
                metrics.rateLimited();
                from.reject(new GatewayError(ErrorCode.RATE_LIMITED, "too many runs started; try again within 60 s",
                        Map.of("retry_after_seconds", "60")));
                return false;
            }
            return true;
        } catch (ClusterLink.ClusterUnavailable e) {
            log.warn("a run of conversation {} could not start: {}", c.id, e.getMessage());
            from.reject(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway cluster cannot be reached; try again shortly"));
            return false;
        }
    }

    /**
     * Holds the conversation's lease, asking every 50 ms: for up to {@link #WAIT_WHILE_A_RUN_GOES_ON_MS}
     * while this node knows of a run going on there (reading what the cluster has meanwhile, as that
     * run may have ended), and up to {@link #WAIT_AFTER_A_RUN_MS} in all once it knows of none: a run
     * that just ended on another node lets its lease go only once its last events are published and
     * stored.
     */
    private boolean holdSoon(ConversationState c) {
        long start = System.nanoTime();
        long caughtUpAt = start;
        while (!cluster.hold(c)) {
            boolean runGoingOn;
            synchronized (c) {
                runGoingOn = c.remoteRunId != null;
            }
            long now = System.nanoTime();
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(now - start);
            if (waitedMs >= (runGoingOn ? WAIT_WHILE_A_RUN_GOES_ON_MS : WAIT_AFTER_A_RUN_MS)) {
                return false;
            }
            if (runGoingOn && TimeUnit.NANOSECONDS.toMillis(now - caughtUpAt) >= CATCH_UP_EVERY_MS) {
                cluster.catchUpQuietly(c);
                caughtUpAt = System.nanoTime();
                continue;
            }
            try {
                Thread.sleep(HOLD_PAUSE_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    /** Starts the run unless refused (the subscriber told why); true when it started. */
    private boolean start(ConversationState c, Command.StartRun cmd, Subscriber from, Principal principal,
                          List<InputMessage> fresh) {
        Run run;
        synchronized (c) {
            if (refusedWhileShuttingDown(from)) {
                return false;
            }
            if (c.active != null) {
                // The person still joins the conversation: they see the active run from here on,
                // and its pending approvals, which they may answer.
                replay.subscribe(c, from, -1, true);
                from.reject(busy(c));
                return false;
            }
            long wait = cluster != null ? 0 : runLimiter.acquire(from.clientKey());
            if (wait > 0) {
                metrics.rateLimited();
                from.reject(new GatewayError(ErrorCode.RATE_LIMITED, "too many runs started; try again in " + wait
                        + " s", Map.of("retry_after_seconds", Long.toString(wait))));
                return false;
            }
            String runId = cmd.runId() != null ? cmd.runId() : Ids.next("run");
            RunRequest request = new RunRequest(c.id, runId, cmd.parentRunId(), principal, fresh,
                    cmd.tools(), cmd.context(), cmd.state(), cmd.forwardedProps(), cmd.metadata());
            run = new Run(this, c, request, from);
            c.active = run;
            activeRuns.incrementAndGet();
            metrics.runStarted();
            if (!c.persisted) {
                c.persisted = true;
                c.owner = principal.ownerKey();
                ConversationRecord rec = new ConversationRecord(c.id, c.owner, clock.getAsLong());
                emitter.writeLocked(c, b -> b.addConversation(rec), null);
                String owner = c.owner;
                // Connections that joined before the conversation existed stay only if they may use it.
                c.subscribers.removeIf(s -> {
                    boolean foreign = !s.principal().mayUse(owner);
                    if (foreign) {
                        table.leave(s, c.id);
                        s.reject(GatewayError.of(ErrorCode.FORBIDDEN, "conversation " + c.id
                                + " was created by another principal"));
                    }
                    return foreign;
                });
            }
            replay.subscribe(c, from, -1, true);
            long now = clock.getAsLong();
            for (InputMessage m : fresh) {
                run.ownMessages.add(m.id());
                emitter.writeMessageLocked(c, new StoreBatch.MessageRow(c.id, runId, m, now));
            }
            emitter.emitLocked(run, new Event.RunStarted(cmd.parentRunId()), null);
            run.startSeq = c.lastSeq;
        }
        // Here, not on another worker: the runtime's start returns quickly, and a hop would delay every run's first event.
        run.launch();
        return true;
    }

    public void cancel(Command.CancelRun cmd, Subscriber from) {
        ConversationState c = table.access(cmd.conversationId(), from, false).orElse(null);
        if (c == null) {
            return;
        }
        Run run;
        synchronized (c) {
            run = c.active;
            if (run == null || (cmd.runId() != null && !cmd.runId().equals(run.request.runId()))) {
                from.reject(GatewayError.field(ErrorCode.NOT_FOUND, "run_id", "no active run to cancel"));
                return;
            }
        }
        run.cancel(ErrorCode.CANCELLED, "the run was cancelled");
    }


    public void resume(Command.Resume cmd, Subscriber from) {
        ConversationState c = table.access(cmd.conversationId(), from, false).orElse(null);
        if (c == null) {
            return;
        }
        Run run;
        List<PendingApproval> waiting;
        synchronized (c) {
            run = c.active;
            waiting = run == null ? List.of() : List.copyOf(run.waiting);
        }
        if (run == null) {
            if (cluster != null && forwardAll(c, cmd.decisions(), from)) {
                return;
            }
            continueOrphans(c, cmd.decisions(), from, true);
            return;
        }
        if (waiting.isEmpty()) {
            from.reject(busy(c));
            return;
        }
        Set<String> pendingIds = new HashSet<>();
        waiting.forEach(p -> pendingIds.add(p.record.approvalId()));
        if (!sameIds(pendingIds, cmd.decisions(), from)) {
            return;
        }
        for (Command.DecideApproval d : cmd.decisions()) {
            PendingApproval p = table.awaited.get(d.approvalId());
            ApprovalDecision decision = new ApprovalDecision(d.approvalId(), d.approved(), d.feedback(), d.payload(),
                    from.principal());
            if (p == null || !p.run.resolve(p, decision)) {
                from.reject(GatewayError.field(ErrorCode.CONFLICT, "approval_id",
                        "approval " + d.approvalId() + " was already decided"));
                return;
            }
        }
    }

    /** True when the decisions answer exactly these pending approvals; else tells the subscriber. */
    private static boolean sameIds(Set<String> pending, List<Command.DecideApproval> decisions, Subscriber from) {
        Set<String> given = new HashSet<>();
        for (Command.DecideApproval d : decisions) {
            if (!given.add(d.approvalId())) {
                from.reject(GatewayError.field(ErrorCode.INVALID_FIELD, "approval_id",
                        "approval " + d.approvalId() + " is answered twice"));
                return false;
            }
        }
        if (!given.equals(pending)) {
            Set<String> missing = new TreeSet<>(pending);
            missing.removeAll(given);
            Set<String> unknown = new TreeSet<>(given);
            unknown.removeAll(pending);
            from.reject(new GatewayError(ErrorCode.INVALID_FIELD,
                    "a resume must answer every pending approval of the thread and nothing else"
                            + (missing.isEmpty() ? "" : "; unanswered: " + missing)
                            + (unknown.isEmpty() ? "" : "; not pending: " + unknown),
                    Map.of("field", "resume")));
            return false;
        }
        return true;
    }

    /**
     * Answers approvals that are pending in the store but whose run did not survive a restart:
     * the decisions are recorded and the runtime continues the work in a new run.
     */
    void continueOrphans(ConversationState c, List<Command.DecideApproval> decisions, Subscriber from, boolean join) {
        if (cluster == null) {
            continueHeld(c, decisions, from, join);
            return;
        }
        try {
            if (!cluster.hold(c)) {
                from.reject(GatewayError.of(ErrorCode.BUSY, "a run is active in conversation " + c.id
                        + " on another gateway node; answer its approvals there or when it ends"));
                return;
            }
        } catch (ClusterLink.ClusterUnavailable e) {
            from.reject(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway cluster cannot be reached; try again shortly"));
            return;
        }
        boolean started = false;
        try {
            started = continueHeld(c, decisions, from, join);
        } finally {
            if (!started) {
                cluster.release(c);
            }
        }
    }

    /**
     * Sends the decisions to the node that runs the conversation's run; false when no other node
     * runs one (they are taken here).
     */
    private boolean forwardAll(ConversationState c, List<Command.DecideApproval> decisions, Subscriber from) {
        try {
            for (Command.DecideApproval d : decisions) {
                if (!cluster.forward(c, d, from, null)) {
                    return false;
                }
            }
            return !decisions.isEmpty();
        } catch (ClusterLink.ClusterUnavailable e) {
            from.reject(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway cluster cannot be reached; try again shortly"));
            return true;
        }
    }

    /** {@link #continueOrphans}, holding the conversation's lease in a cluster; true when the new run started. */
    private boolean continueHeld(ConversationState c, List<Command.DecideApproval> decisions, Subscriber from,
                                 boolean join) {
        List<ApprovalRecord> pending;
        synchronized (c) {
            pending = c.open.values().stream().filter(a -> a.runId() != null).toList();
        }
        if (pending.isEmpty()) {
            from.reject(GatewayError.field(ErrorCode.NOT_FOUND, "approval_id",
                    "conversation " + c.id + " has no run waiting for an approval"));
            return false;
        }
        String oldRun = pending.get(0).runId();
        Set<String> ids = new HashSet<>();
        pending.stream().filter(a -> Objects.equals(a.runId(), oldRun)).forEach(a -> ids.add(a.approvalId()));
        if (!sameIds(ids, decisions, from)) {
            return false;
        }
        long now = clock.getAsLong();
        List<ApprovalRecord> decided = new ArrayList<>();
        for (Command.DecideApproval d : decisions) {
            ApprovalRecord rec = pending.stream().filter(a -> a.approvalId().equals(d.approvalId())).findFirst()
                    .orElseThrow();
            decided.add(rec.decided(d.approved(), d.feedback(), from.principal().id(), now));
        }
        Run run;
        synchronized (c) {
            if (refusedWhileShuttingDown(from)) {
                return false;
            }
            if (c.active != null) {
                from.reject(busy(c));
                return false;
            }
            if (!ids.stream().allMatch(c.open::containsKey)) {
                from.reject(GatewayError.field(ErrorCode.CONFLICT, "approval_id",
                        "the approvals of run " + oldRun + " were decided a moment ago"));
                return false;
            }
            RunRequest request = new RunRequest(c.id, Ids.next("run"), oldRun, from.principal(), List.of(),
                    List.of(), null, null, null, null);
            run = new Run(this, c, request, from);
            c.active = run;
            activeRuns.incrementAndGet();
            metrics.runStarted();
            if (join) {
                replay.subscribe(c, from, -1, false);
            }
            emitter.emitLocked(run, new Event.RunStarted(oldRun), null);
            run.startSeq = c.lastSeq;
            for (int i = 0; i < decided.size(); i++) {
                ApprovalRecord a = decided.get(i);
                emitter.writeApprovalLocked(c, a);
                Runnable then = i == decided.size() - 1 ? () -> run.continueWith(decided) : null;
                emitter.emitLocked(run, new Event.ApprovalResolved(a.approvalId(), a.status() == ApprovalRecord.Status.APPROVED,
                        a.feedback(), a.decidedBy()), then);
            }
        }
        return true;
    }

    /** The BUSY error for a conversation with an active run, naming what it waits for. */
    private static GatewayError busy(ConversationState c) {
        Run run = c.active;
        if (!run.waiting.isEmpty()) {
            List<String> ids = run.waiting.stream().map(p -> p.record.approvalId()).toList();
            return new GatewayError(ErrorCode.BUSY, "conversation " + c.id + " has a run waiting for approval "
                    + String.join(", ", ids) + "; answer it before starting another run",
                    Map.of("run_id", run.request.runId(), "approval_ids", String.join(",", ids)));
        }
        return new GatewayError(ErrorCode.BUSY, "a run is already active in conversation " + c.id,
                Map.of("run_id", run.request.runId()));
    }

    /**
     * The given messages that the conversation does not hold yet (clients may resend history); with
     * {@code memoryOnly}, null when only the store could tell.
     */
    private List<InputMessage> newMessages(ConversationState c, List<InputMessage> given, boolean memoryOnly) {
        boolean stored;
        synchronized (c) {
            stored = c.persisted;
        }
        if (!stored) {
            return given;
        }
        Set<String> ids = given.stream().map(InputMessage::id).collect(Collectors.toSet());
        Set<String> known = memoryOnly ? emitter.knownMessageIdsInMemory(c, ids) : emitter.knownMessageIds(c, ids);
        if (known == null) {
            return null;
        }
        List<InputMessage> out = new ArrayList<>(given.size());
        for (InputMessage m : given) {
            if (!known.contains(m.id())) {
                out.add(m);
            }
        }
        return out;
    }

    /**
     * Refuses new runs and new approvals from now on; a run that asks for an approval from now on
     * suspends itself (see {@link Run#suspendIfWaiting}).
     */
    public void refuseNew() {
        shuttingDown = true;
    }

    /**
     * After {@link #refuseNew}: suspends at once every run that only waits for an approval, lets
     * the other runs finish within {@code grace} and fails the rest.
     */
    public void stopAll(Duration grace) {
        forEachActive(Run::suspendIfWaiting);
        long deadline = System.nanoTime() + grace.toNanos();
        while (activeRuns.get() > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        forEachActive(run -> run.cancel(ErrorCode.UNAVAILABLE, "the gateway shut down before the run finished"));
    }

    private void forEachActive(Consumer<Run> action) {
        for (ConversationState c : table.all()) {
            Run run;
            synchronized (c) {
                run = c.active;
            }
            if (run != null) {
                action.accept(run);
            }
        }
    }

    /** Refuses a new run while the gateway shuts down; the caller holds the conversation's lock. */
    private boolean refusedWhileShuttingDown(Subscriber from) {
        boolean refused = shuttingDown;
        if (refused) {
            from.reject(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway is shutting down; try again shortly"));
        }
        return refused;
    }
}
