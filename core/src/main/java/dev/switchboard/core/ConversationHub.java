package dev.switchboard.core;

import dev.switchboard.core.internal.Sequencer;
import dev.switchboard.core.internal.SerialExecutor;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.ApprovalDecision;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ApprovalRequest;
import dev.switchboard.core.spi.ConversationRecord;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.RunContext;
import dev.switchboard.core.spi.RunHandle;
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
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * The conversation hub: per conversation, its subscribers, its one active run, its pending
 * approvals and its event log. Every command from every dialect comes here; every event of
 * every runtime leaves here.
 *
 * <p>Threads: {@link #submit} and {@link #disconnected} never block the caller (commands
 * run on the hub's workers, which may read the store); events get their {@code seq} under the
 * conversation's lock and are stored, then fanned out, by the {@link Sequencer}.
 */
public final class ConversationHub implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConversationHub.class);
    private static final int REPLAY_PAGE = 500;
    private static final long IDLE_EVICT_MS = TimeUnit.MINUTES.toMillis(5);

    private final ConversationStore store;
    private final AgentRuntime runtime;
    private final Moderation moderation;
    private final RateLimiter runLimiter;
    private final LongSupplier clock;
    private final Sequencer sequencer;
    private final ExecutorService workers;
    private final ScheduledExecutorService timer;
    private final Map<String, Conversation> conversations = new ConcurrentHashMap<>();
    private final Map<String, Pending> approvals = new ConcurrentHashMap<>();
    private final Map<Subscriber, Set<String>> memberships = new ConcurrentHashMap<>();
    /** Each subscriber's commands run in order, one at a time. */
    private final Map<Subscriber, SerialExecutor> lanes = new ConcurrentHashMap<>();
    private final AtomicInteger activeRuns = new AtomicInteger();
    private volatile boolean shuttingDown;
    private CompletableFuture<Void> shutdown;

    private ConversationHub(Builder b) {
        this.store = Objects.requireNonNull(b.store, "store");
        this.runtime = Objects.requireNonNull(b.runtime, "runtime");
        this.moderation = b.moderation;
        this.runLimiter = new RateLimiter(b.runsPerMinute, b.clock);
        this.clock = b.clock;
        this.sequencer = new Sequencer(store);
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
        timer.scheduleWithFixedDelay(() -> sequencer.run(this::evictIdle), 1, 1, TimeUnit.MINUTES);
        failInterruptedRuns();
    }

    /**
     * Ends the runs the store shows started and never ended (the gateway stopped under them,
     * even with kill -9) with a RunFailed a resuming client sees. Their pending approvals stay
     * pending: answered, they continue the work in a new run.
     */
    private void failInterruptedRuns() {
        for (Envelope started : store.unfinishedRuns()) {
            Conversation c = load(started.conversationId());
            synchronized (c) {
                emitLocked(c, null, started.runId(), new Event.RunFailed(ErrorCode.UNAVAILABLE,
                        "the gateway stopped while this run was active; start it again"), null);
            }
            log.info("run {} of conversation {} was interrupted by a stop of the gateway; marked failed",
                    started.runId(), started.conversationId());
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The store behind the hub. */
    public ConversationStore store() {
        return store;
    }

    /** Runs in progress. */
    public int activeRuns() {
        return activeRuns.get();
    }

    /**
     * Handles a command from a subscriber. Errors are answered through
     * {@link Subscriber#reject}; {@link Command.Ping} is the connection's own business.
     */
    public void submit(Command command, Subscriber from) {
        Objects.requireNonNull(from, "from");
        try {
            lanes.computeIfAbsent(from, k -> new SerialExecutor(workers)).execute(() -> {
                try {
                    handle(command, from);
                } catch (RuntimeException e) {
                    log.error("command {} failed", command.getClass().getSimpleName(), e);
                    from.reject(GatewayError.of(ErrorCode.INTERNAL, "the gateway could not handle the request"));
                }
            });
        } catch (RejectedExecutionException stopped) {
            from.reject(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway is shutting down; try again shortly"));
        }
    }

    /** The subscriber's connection closed: it leaves every conversation. Runs go on. */
    public void disconnected(Subscriber s) {
        Runnable leave = () -> {
            Set<String> joined = memberships.remove(s);
            if (joined != null && !joined.isEmpty()) {
                sequencer.run(() -> {
                    for (String id : joined) {
                        Conversation c = conversations.get(id);
                        if (c != null) {
                            c.subscribers.remove(s);
                        }
                    }
                });
            }
        };
        // After the subscriber's queued commands, so none of them joins it to a conversation again.
        SerialExecutor lane = lanes.remove(s);
        if (lane == null) {
            leave.run();
        } else {
            try {
                lane.execute(leave);
            } catch (RejectedExecutionException stopped) {
                leave.run();
            }
        }
    }

    private void handle(Command command, Subscriber from) {
        if (command instanceof Command.StartRun start) {
            startRun(start, from);
        } else if (command instanceof Command.DecideApproval decide) {
            decide(decide, from);
        } else if (command instanceof Command.CancelRun cancel) {
            cancel(cancel, from);
        } else if (command instanceof Command.Resume resume) {
            resume(resume, from);
        } else if (command instanceof Command.Subscribe sub) {
            // Live joins may name a conversation that does not exist yet: clients pick a new
            // conversation's id and connect before their first message. Its creator decides who
            // stays (see startRun). Replays, and reattaches to the last run, need a stored conversation.
            boolean live = sub.afterSeq() < 0 && sub.afterSeq() != Command.Subscribe.LAST_RUN;
            Optional<Conversation> c = access(sub.conversationId(), from, live);
            c.ifPresent(conv -> subscribe(conv, from, sub.afterSeq(), sub.catchUp()));
        }
    }

    // ---- conversations -------------------------------------------------------------------

    /**
     * The conversation's live state, loaded from the store on first use. Empty (and the
     * subscriber told why) when the principal may not use it, or it does not exist and
     * {@code create} is false.
     */
    private Optional<Conversation> access(String id, Subscriber from, boolean create) {
        Conversation c = load(id);
        synchronized (c) {
            if (c.retired) {
                return access(id, from, create);
            }
            if (!c.persisted && !create) {
                from.reject(GatewayError.field(ErrorCode.NOT_FOUND, "conversation", "no conversation " + id));
                return Optional.empty();
            }
            if (c.persisted && !from.principal().mayUse(c.owner)) {
                from.reject(GatewayError.of(ErrorCode.FORBIDDEN, "conversation " + id + " belongs to another principal"));
                return Optional.empty();
            }
            c.touched = clock.getAsLong();
        }
        return Optional.of(c);
    }

    private Conversation load(String id) {
        Conversation c = conversations.get(id);
        if (c != null) {
            return c;
        }
        // Read outside the map lock; a racing loader's copy loses to the first one put.
        Optional<ConversationRecord> rec = store.conversation(id);
        long lastSeq = store.lastSeq(id);
        Conversation fresh = new Conversation(id, rec.map(ConversationRecord::owner).orElse(null),
                rec.isPresent(), lastSeq, clock.getAsLong());
        Conversation prior = conversations.putIfAbsent(id, fresh);
        return prior != null ? prior : fresh;
    }

    /** Runs on the sequencer: forgets conversations nobody uses, after their writes are stored. */
    private void evictIdle() {
        long now = clock.getAsLong();
        conversations.values().removeIf(c -> {
            synchronized (c) {
                c.retired = c.active == null && c.subscribers.isEmpty() && c.inFlight == 0 && c.pending == 0
                        && now - c.touched > IDLE_EVICT_MS;
                return c.retired;
            }
        });
    }

    /**
     * Joins a subscriber to a conversation's fan-out, on the sequencer. With a cursor it first
     * gets every stored event after it. Without one it gets the active run from its start (so
     * a display that joins mid-run is whole) and, if it can answer them, the approvals still
     * pending that the run's replay did not show.
     */
    private void subscribe(Conversation c, Subscriber s, long afterSeq, boolean catchUp) {
        memberships.computeIfAbsent(s, k -> ConcurrentHashMap.newKeySet()).add(c.id);
        sequencer.run(() -> {
            if (c.subscribers.contains(s)) {
                return;
            }
            long from = afterSeq;
            if (afterSeq < 0 && (catchUp || afterSeq == Command.Subscribe.LAST_RUN)) {
                long lastSeq;
                synchronized (c) {
                    // Only what is stored is replayed: the rest of the run follows live.
                    from = c.active == null || c.active.startSeq == 0 ? -1 : c.active.startSeq - 1;
                    lastSeq = c.lastSeq;
                }
                if (from < 0 && afterSeq == Command.Subscribe.LAST_RUN) {
                    from = lastRunStart(c, lastSeq) - 1;
                    if (from < 0) {
                        boolean idle;
                        synchronized (c) {
                            idle = c.active == null;
                        }
                        if (idle) {
                            // No run to reattach to, active or past: nothing to resume.
                            s.caughtUp();
                        }
                    }
                }
            }
            if (afterSeq > 0) {
                prime(c, s, afterSeq);
            }
            long replayedUpTo = from;
            if (from >= 0) {
                replayedUpTo = replay(c, s, from);
                if (replayedUpTo < 0) {
                    return;
                }
            }
            if (afterSeq >= 0 && replayedUpTo == afterSeq) {
                boolean idle;
                synchronized (c) {
                    idle = c.active == null;
                }
                if (idle) {
                    s.caughtUp();
                }
            }
            if (afterSeq < 0 && catchUp && s.answersApprovals()) {
                for (ApprovalRecord a : store.pendingApprovals(c.id)) {
                    if (a.seq() > from && a.seq() <= replayedUpTo) {
                        continue;
                    }
                    for (Envelope e : store.events(c.id, a.seq() - 1, 1)) {
                        if (!s.deliver(e)) {
                            s.overflowed();
                            return;
                        }
                    }
                }
            }
            c.subscribers.add(s);
        });
    }

    /**
     * A client resuming from a cursor inside a run was shown that run up to the cursor: hands
     * those events to the subscriber to prime its dialect's state, so what follows continues the
     * run as the client saw it (no second start of a message, chunk numbers that go on).
     */
    private void prime(Conversation c, Subscriber s, long cursor) {
        List<Envelope> at = store.events(c.id, cursor - 1, 1);
        if (at.isEmpty() || at.get(0).runId() == null || at.get(0).event().kind() == Event.Kind.RUN_FINISHED
                || at.get(0).event().kind() == Event.Kind.RUN_FAILED) {
            return;
        }
        long after = lastRunStart(c, cursor) - 1;
        if (after < 0) {
            return;
        }
        while (after < cursor) {
            List<Envelope> page = store.events(c.id, after, (int) Math.min(REPLAY_PAGE, cursor - after));
            if (page.isEmpty()) {
                return;
            }
            s.prime(page);
            after = page.get(page.size() - 1).seq();
        }
    }

    /** The seq of the conversation's last stored RunStarted at or before {@code lastSeq}, or 0 for none. */
    private long lastRunStart(Conversation c, long lastSeq) {
        for (long to = lastSeq; to > 0; to -= REPLAY_PAGE) {
            List<Envelope> page = store.events(c.id, Math.max(0, to - REPLAY_PAGE), REPLAY_PAGE);
            for (int i = page.size() - 1; i >= 0; i--) {
                if (page.get(i).seq() <= to && page.get(i).event().kind() == Event.Kind.RUN_STARTED) {
                    return page.get(i).seq();
                }
            }
        }
        return 0;
    }

    /** Delivers stored events after {@code afterSeq}; the last seq delivered, or -1 if the subscriber overflowed. */
    private long replay(Conversation c, Subscriber s, long afterSeq) {
        long cursor = afterSeq;
        while (true) {
            List<Envelope> page = store.events(c.id, cursor, REPLAY_PAGE);
            for (Envelope e : page) {
                if (!s.deliver(e)) {
                    s.overflowed();
                    return -1;
                }
                cursor = e.seq();
            }
            if (page.size() < REPLAY_PAGE) {
                return cursor;
            }
        }
    }

    // ---- runs ----------------------------------------------------------------------------

    private void startRun(Command.StartRun cmd, Subscriber from) {
        Conversation c = access(cmd.conversationId(), from, true).orElse(null);
        if (c == null) {
            return;
        }
        List<InputMessage> fresh = newMessages(c, cmd.messages());
        if (fresh.stream().noneMatch(m -> m.role() == Role.USER || m.role() == Role.TOOL)) {
            from.reject(GatewayError.field(ErrorCode.MISSING_FIELD, "messages",
                    "a run needs a new user message (or a tool result); every message given is already in the conversation"));
            return;
        }
        for (InputMessage m : fresh) {
            if (m.role() == Role.USER) {
                Optional<String> word = moderation.firstBlocked(m.content());
                if (word.isPresent()) {
                    from.reject(new GatewayError(ErrorCode.MODERATION, "the message contains prohibited content",
                            Map.of("blocked_pattern", "profanity")));
                    return;
                }
            }
        }
        Principal principal = from.principal();
        Run run;
        synchronized (c) {
            if (shuttingDown) {
                from.reject(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway is shutting down; try again shortly"));
                return;
            }
            if (c.active != null) {
                // The person still joins the conversation: they see the active run from here on,
                // and its pending approvals, which they may answer.
                subscribe(c, from, -1, true);
                from.reject(busy(c));
                return;
            }
            long wait = runLimiter.acquire(from.clientKey());
            if (wait > 0) {
                from.reject(new GatewayError(ErrorCode.RATE_LIMITED, "too many runs started; try again in " + wait
                        + " s", Map.of("retry_after_seconds", Long.toString(wait))));
                return;
            }
            String runId = cmd.runId() != null ? cmd.runId() : Ids.next("run");
            RunRequest request = new RunRequest(c.id, runId, cmd.parentRunId(), principal, fresh,
                    cmd.tools(), cmd.context(), cmd.state(), cmd.forwardedProps(), cmd.metadata());
            run = new Run(c, request);
            c.active = run;
            activeRuns.incrementAndGet();
            if (!c.persisted) {
                c.persisted = true;
                c.owner = principal.ownerKey();
                ConversationRecord rec = new ConversationRecord(c.id, c.owner, clock.getAsLong());
                writeLocked(c, b -> b.addConversation(rec), null);
                String owner = c.owner;
                // Connections that joined before the conversation existed stay only if they may use it.
                sequencer.run(() -> c.subscribers.removeIf(s -> {
                    boolean foreign = !s.principal().mayUse(owner);
                    if (foreign) {
                        Set<String> joined = memberships.get(s);
                        if (joined != null) {
                            joined.remove(c.id);
                        }
                        s.reject(GatewayError.of(ErrorCode.FORBIDDEN, "conversation " + c.id
                                + " was created by another principal"));
                    }
                    return foreign;
                }));
            }
            subscribe(c, from, -1, true);
            long now = clock.getAsLong();
            for (InputMessage m : fresh) {
                run.ownMessages.add(m.id());
                StoreBatch.MessageRow row = new StoreBatch.MessageRow(c.id, runId, m, now);
                writeLocked(c, b -> b.addMessage(row), null);
            }
            emitLocked(run, new Event.RunStarted(cmd.parentRunId()), () -> workers.execute(run::launch));
            run.startSeq = c.lastSeq;
        }
    }

    private void cancel(Command.CancelRun cmd, Subscriber from) {
        Conversation c = access(cmd.conversationId(), from, false).orElse(null);
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

    private void decide(Command.DecideApproval cmd, Subscriber from) {
        decide(cmd, from, false);
    }

    /**
     * Decides one approval. A person must have joined its conversation; an operator (the A2H
     * side, authenticated by its own keys) may decide any.
     */
    private void decide(Command.DecideApproval cmd, Subscriber from, boolean operator) {
        Pending p = approvals.get(cmd.approvalId());
        if (p == null) {
            Optional<ApprovalRecord> stored = store.approval(cmd.approvalId());
            if (stored.isEmpty()) {
                from.reject(GatewayError.field(ErrorCode.NOT_FOUND, "approval_id", "unknown approval_id " + cmd.approvalId()));
            } else if (!operator && !memberOf(from, stored.get().conversationId())) {
                from.reject(GatewayError.field(ErrorCode.FORBIDDEN, "approval_id",
                        "approval " + cmd.approvalId() + " belongs to a conversation this connection has not joined"));
            } else if (stored.get().status() != ApprovalRecord.Status.PENDING) {
                from.reject(GatewayError.field(ErrorCode.CONFLICT, "approval_id",
                        "approval " + cmd.approvalId() + " was already decided"));
            } else {
                // Pending in the store only: its run, or its asker, did not survive a restart.
                Conversation c = operator ? load(stored.get().conversationId())
                        : access(stored.get().conversationId(), from, false).orElse(null);
                if (c == null) {
                    return;
                }
                if (stored.get().runId() == null) {
                    decideStoredExternal(c, stored.get(), cmd, from);
                } else {
                    continueOrphans(c, List.of(cmd), from, !operator);
                }
            }
            return;
        }
        Conversation c = p.conversation;
        if (!operator && (!memberOf(from, c.id) || !from.principal().mayUse(c.owner))) {
            from.reject(GatewayError.field(ErrorCode.FORBIDDEN, "approval_id",
                    "approval " + cmd.approvalId() + " belongs to a conversation this connection has not joined"));
            return;
        }
        ApprovalDecision decision = new ApprovalDecision(cmd.approvalId(), cmd.approved(), cmd.feedback(),
                cmd.payload(), from.principal());
        boolean decided = p.run != null ? p.run.resolve(p, decision) : resolveExternal(p, decision);
        if (!decided) {
            from.reject(GatewayError.field(ErrorCode.CONFLICT, "approval_id",
                    "approval " + cmd.approvalId() + " was already decided"));
        }
    }

    // ---- approvals asked from outside any run (A2H) ----------------------------------------

    /**
     * Asks the people of a conversation to approve something outside any run, as the A2H side
     * does for an agent's function call: the request is stored and shown to every connection of
     * the conversation that can answer, now or when one joins. The conversation is created if
     * needed, with no owner. Completes with the approval once it is stored, so a read of the
     * store that follows sees it.
     */
    public CompletableFuture<ApprovalRecord> requestApproval(String conversationId, ApprovalRequest request) {
        Objects.requireNonNull(conversationId, "conversationId");
        Objects.requireNonNull(request, "request");
        return CompletableFuture.supplyAsync(() -> {
            while (true) {
                Conversation c = load(conversationId);
                synchronized (c) {
                    if (c.retired) {
                        continue;
                    }
                    if (shuttingDown) {
                        throw new IllegalStateException("the gateway is shutting down");
                    }
                    c.touched = clock.getAsLong();
                    if (!c.persisted) {
                        c.persisted = true;
                        ConversationRecord rec = new ConversationRecord(c.id, null, clock.getAsLong());
                        writeLocked(c, b -> b.addConversation(rec), null);
                    }
                    Event.ApprovalRequested event = new Event.ApprovalRequested(Ids.next("appr"), request.toolCallId(),
                            request.toolName(), request.description(), request.arguments(), request.reasoning(),
                            request.risk());
                    ApprovalRecord rec = new ApprovalRecord(c.id, null, c.lastSeq + 1, event,
                            ApprovalRecord.Status.PENDING, null, null, null);
                    approvals.put(event.approvalId(), new Pending(rec, c, null));
                    c.pending++;
                    emitLocked(c, null, event, null);
                    return rec;
                }
            }
        }, workers).thenCompose(this::afterQueuedWrites);
    }

    /** Completes with {@code value} once every write queued so far is stored. */
    private <T> CompletableFuture<T> afterQueuedWrites(T value) {
        CompletableFuture<T> stored = new CompletableFuture<>();
        sequencer.run(() -> stored.complete(value));
        return stored;
    }

    /**
     * Decides an approval as an operator (the A2H side): any pending approval, of a run, of a
     * run lost to a restart, or asked from outside any run. Completes with null once the
     * decision is stored, else with the error (unknown, already decided, ...).
     */
    public CompletableFuture<GatewayError> decideAsOperator(String approvalId, boolean approved, String feedback,
                                                            JsonNode payload, Principal by) {
        CompletableFuture<GatewayError> result = new CompletableFuture<>();
        Subscriber operator = new OperatorReply(by, result);
        try {
            workers.execute(() -> {
                try {
                    decide(new Command.DecideApproval(approvalId, approved, feedback, payload), operator, true);
                    // A refusal has completed the result already; this only completes a decision.
                    sequencer.run(() -> result.complete(null));
                } catch (RuntimeException e) {
                    log.error("operator decision of {} failed", approvalId, e);
                    result.complete(GatewayError.of(ErrorCode.INTERNAL, "the decision could not be recorded"));
                }
            });
        } catch (RejectedExecutionException stopped) {
            result.complete(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway is shutting down; try again shortly"));
        }
        return result;
    }

    /** Pending approvals of every conversation, oldest first: what an operator may answer. */
    public List<ApprovalRecord> pendingApprovals(int limit, int offset) {
        return store.pendingApprovals(limit, offset);
    }

    private boolean resolveExternal(Pending p, ApprovalDecision d) {
        Conversation c = p.conversation;
        synchronized (c) {
            if (!approvals.remove(p.record.approvalId(), p)) {
                return false;
            }
            c.pending--;
            ApprovalRecord decided = p.record.decided(d.approved(), d.feedback(), d.decidedBy().id(), clock.getAsLong());
            writeLocked(c, b -> b.putApproval(decided), null);
            emitLocked(c, null, new Event.ApprovalResolved(p.record.approvalId(), d.approved(), d.feedback(),
                    d.decidedBy().id()), () -> p.decision.complete(d));
        }
        return true;
    }

    private void decideStoredExternal(Conversation c, ApprovalRecord stored, Command.DecideApproval cmd, Subscriber from) {
        synchronized (c) {
            if (c.decidedExternally.contains(stored.approvalId())) {
                from.reject(GatewayError.field(ErrorCode.CONFLICT, "approval_id",
                        "approval " + stored.approvalId() + " was already decided"));
                return;
            }
            c.decidedExternally.add(stored.approvalId());
            ApprovalRecord decided = stored.decided(cmd.approved(), cmd.feedback(), from.principal().id(),
                    clock.getAsLong());
            writeLocked(c, b -> b.putApproval(decided), null);
            emitLocked(c, null, new Event.ApprovalResolved(stored.approvalId(), cmd.approved(), cmd.feedback(),
                    from.principal().id()), null);
        }
    }

    /** The subscriber an operator's decision answers through: it keeps the first error. */
    private static final class OperatorReply implements Subscriber {
        private final Principal principal;
        private final CompletableFuture<GatewayError> result;

        OperatorReply(Principal principal, CompletableFuture<GatewayError> result) {
            this.principal = principal;
            this.result = result;
        }

        @Override
        public Principal principal() {
            return principal;
        }

        @Override
        public boolean answersApprovals() {
            return false;
        }

        @Override
        public boolean deliver(Envelope envelope) {
            return true;
        }

        @Override
        public void overflowed() {
        }

        @Override
        public void reject(GatewayError error) {
            result.complete(error);
        }
    }

    private void resume(Command.Resume cmd, Subscriber from) {
        Conversation c = access(cmd.conversationId(), from, false).orElse(null);
        if (c == null) {
            return;
        }
        Run run;
        List<Pending> waiting;
        synchronized (c) {
            run = c.active;
            waiting = run == null ? List.of() : List.copyOf(run.waiting);
        }
        if (run == null) {
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
            Pending p = approvals.get(d.approvalId());
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
            Set<String> missing = new java.util.TreeSet<>(pending);
            missing.removeAll(given);
            Set<String> unknown = new java.util.TreeSet<>(given);
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
    private void continueOrphans(Conversation c, List<Command.DecideApproval> decisions, Subscriber from, boolean join) {
        List<ApprovalRecord> pending = store.pendingApprovals(c.id).stream().filter(a -> a.runId() != null).toList();
        if (pending.isEmpty()) {
            from.reject(GatewayError.field(ErrorCode.NOT_FOUND, "approval_id",
                    "conversation " + c.id + " has no run waiting for an approval"));
            return;
        }
        String oldRun = pending.get(0).runId();
        Set<String> ids = new HashSet<>();
        pending.stream().filter(a -> Objects.equals(a.runId(), oldRun)).forEach(a -> ids.add(a.approvalId()));
        if (!sameIds(ids, decisions, from)) {
            return;
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
            if (shuttingDown) {
                from.reject(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway is shutting down; try again shortly"));
                return;
            }
            if (c.active != null) {
                from.reject(busy(c));
                return;
            }
            RunRequest request = new RunRequest(c.id, Ids.next("run"), oldRun, from.principal(), List.of(),
                    List.of(), null, null, null, null);
            run = new Run(c, request);
            c.active = run;
            activeRuns.incrementAndGet();
            if (join) {
                subscribe(c, from, -1, false);
            }
            emitLocked(run, new Event.RunStarted(oldRun), null);
            run.startSeq = c.lastSeq;
            for (int i = 0; i < decided.size(); i++) {
                ApprovalRecord a = decided.get(i);
                writeLocked(c, b -> b.putApproval(a), null);
                Runnable then = i == decided.size() - 1 ? () -> workers.execute(() -> run.continueWith(decided)) : null;
                emitLocked(run, new Event.ApprovalResolved(a.approvalId(), a.status() == ApprovalRecord.Status.APPROVED,
                        a.feedback(), a.decidedBy()), then);
            }
        }
    }

    /** The BUSY error for a conversation with an active run, naming what it waits for. */
    private static GatewayError busy(Conversation c) {
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

    /** The given messages that the conversation does not hold yet (clients may resend history). */
    private List<InputMessage> newMessages(Conversation c, List<InputMessage> given) {
        boolean stored;
        synchronized (c) {
            stored = c.persisted;
        }
        if (!stored) {
            return given;
        }
        Set<String> known = new HashSet<>();
        for (InputMessage m : store.messages(c.id)) {
            known.add(m.id());
        }
        List<InputMessage> out = new ArrayList<>(given.size());
        for (InputMessage m : given) {
            if (!known.contains(m.id())) {
                out.add(m);
            }
        }
        return out;
    }

    private boolean memberOf(Subscriber s, String conversationId) {
        Set<String> joined = memberships.get(s);
        return joined != null && joined.contains(conversationId);
    }

    // ---- emission ------------------------------------------------------------------------

    /** Queues a write for the conversation; the caller holds its lock. */
    private void writeLocked(Conversation c, java.util.function.Consumer<StoreBatch> fill, Runnable after) {
        c.inFlight++;
        sequencer.write(fill, () -> {
            synchronized (c) {
                c.inFlight--;
            }
            if (after != null) {
                after.run();
            }
        });
    }

    /**
     * Stamps and queues an event of the run; the caller holds the conversation's lock.
     * {@code after} runs once the event is stored and fanned out.
     */
    private void emitLocked(Run run, Event event, Runnable after) {
        emitLocked(run.conversation, run, event, after);
    }

    /**
     * Stamps and queues an event of the conversation, of {@code run} or of no run (null);
     * the caller holds the conversation's lock. {@code after} runs once it is stored and fanned out.
     */
    private void emitLocked(Conversation c, Run run, Event event, Runnable after) {
        emitLocked(c, run, run == null ? null : run.request.runId(), event, after);
    }

    private void emitLocked(Conversation c, Run run, String runId, Event event, Runnable after) {
        Envelope env = new Envelope(c.id, runId, ++c.lastSeq, clock.getAsLong(), event);
        Object prepared = store.prepare(env);
        StoreBatch.MessageRow row = messageOf(env);
        ApprovalRecord approval = event instanceof Event.ApprovalRequested a
                ? new ApprovalRecord(c.id, runId, env.seq(), a, ApprovalRecord.Status.PENDING, null, null, null)
                : null;
        if (row != null && run != null) {
            run.ownMessages.add(row.message().id());
        }
        writeLocked(c, b -> {
            b.addEvent(env, prepared);
            if (row != null) {
                b.addMessage(row);
            }
            if (approval != null) {
                b.putApproval(approval);
            }
        }, () -> {
            fanOut(c, env);
            if (after != null) {
                after.run();
            }
        });
    }

    /** The history message an event adds, if any. */
    private static StoreBatch.MessageRow messageOf(Envelope env) {
        Event e = env.event();
        InputMessage m;
        switch (e.kind()) {
            case MESSAGE_COMPLETED -> {
                Event.MessageCompleted mc = (Event.MessageCompleted) e;
                m = InputMessage.text(mc.messageId(), Role.ASSISTANT, mc.text());
            }
            case TOOL_CALL_COMPLETED -> {
                Event.ToolCallCompleted tc = (Event.ToolCallCompleted) e;
                // Keyed by the tool call id: AG-UI clients name the message of a parentless call so,
                // and send it back with the history of the next run.
                m = new InputMessage(tc.toolCallId(), Role.ASSISTANT, "",
                        List.of(new ToolCallRef(tc.toolCallId(), tc.toolName(), tc.arguments().toString())), null, null);
            }
            case TOOL_RESULT -> {
                Event.ToolResult tr = (Event.ToolResult) e;
                m = new InputMessage(tr.messageId(), Role.TOOL, tr.content(), List.of(), tr.toolCallId(), tr.toolName());
            }
            default -> {
                return null;
            }
        }
        return new StoreBatch.MessageRow(env.conversationId(), env.runId(), m, env.timestamp());
    }

    /** Runs on the sequencer thread. */
    private void fanOut(Conversation c, Envelope env) {
        List<Subscriber> subs = c.subscribers;
        for (int i = 0; i < subs.size(); i++) {
            Subscriber s = subs.get(i);
            if (!s.deliver(env)) {
                subs.remove(i--);
                Set<String> joined = memberships.get(s);
                if (joined != null) {
                    joined.remove(c.id);
                }
                s.overflowed();
            }
        }
    }

    // ---- shutdown ------------------------------------------------------------------------

    /**
     * Refuses new runs, suspends at once every run that only waits for an approval (and any run
     * that comes to wait for one), lets the other runs finish within {@code grace}, fails the rest,
     * then stores everything queued. The store stays open: its owner closes it.
     */
    public synchronized CompletableFuture<Void> shutdown(Duration grace) {
        if (shutdown != null) {
            return shutdown;
        }
        shuttingDown = true;
        shutdown = CompletableFuture.runAsync(() -> {
            // After shuttingDown is set: a run that asks for an approval from now on suspends itself.
            for (Conversation c : conversations.values()) {
                Run run;
                synchronized (c) {
                    run = c.active;
                }
                if (run != null) {
                    run.suspendIfWaiting();
                }
            }
            long deadline = System.nanoTime() + grace.toNanos();
            while (activeRuns.get() > 0 && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            for (Conversation c : conversations.values()) {
                Run run;
                synchronized (c) {
                    run = c.active;
                }
                if (run != null) {
                    run.cancel(ErrorCode.UNAVAILABLE, "the gateway shut down before the run finished");
                }
            }
            sequencer.stop().join();
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

    // ---- state ---------------------------------------------------------------------------

    /** Live state of one conversation; fields guarded by its monitor except {@code subscribers}. */
    private static final class Conversation {
        final String id;
        String owner;
        boolean persisted;
        long lastSeq;
        long touched;
        Run active;
        int inFlight;
        int pending;
        /** Evicted from the map: a holder must load the conversation again. */
        boolean retired;
        /** Stored-only approvals of no run decided since this state was loaded (a once-guard). */
        final Set<String> decidedExternally = new HashSet<>(0);
        /** Touched only on the sequencer thread. */
        final List<Subscriber> subscribers = new ArrayList<>(2);

        Conversation(String id, String owner, boolean persisted, long lastSeq, long touched) {
            this.id = id;
            this.owner = owner;
            this.persisted = persisted;
            this.lastSeq = lastSeq;
            this.touched = touched;
        }
    }

    /** An approval a run waits for. */
    private static final class Pending {
        final ApprovalRecord record;
        final CompletableFuture<ApprovalDecision> decision = new CompletableFuture<>();
        final Conversation conversation;
        /** The run that waits for it; null for an approval asked from outside any run. */
        final Run run;

        Pending(ApprovalRecord record, Conversation conversation, Run run) {
            this.record = record;
            this.conversation = conversation;
            this.run = run;
        }
    }

    /** One active run and its context; the conversation's monitor guards its state. */
    private final class Run implements RunContext {
        final Conversation conversation;
        final RunRequest request;
        final Set<String> ownMessages = new HashSet<>();
        final List<Pending> waiting = new ArrayList<>(1);
        RunHandle handle;
        boolean ended;
        /** The seq of the run's RunStarted; 0 until it is emitted. */
        long startSeq;

        Run(Conversation conversation, RunRequest request) {
            this.conversation = conversation;
            this.request = request;
        }

        void launch() {
            begin(() -> runtime.start(request, this));
        }

        void continueWith(List<ApprovalRecord> decided) {
            begin(() -> runtime.resume(request, decided, this));
        }

        private void begin(java.util.function.Supplier<RunHandle> starter) {
            RunHandle h;
            try {
                h = starter.get();
            } catch (RuntimeException e) {
                log.error("runtime {} failed to start run {}", runtime.id(), request.runId(), e);
                fail(ErrorCode.INTERNAL, "the agent runtime failed to start the run");
                return;
            }
            boolean cancelNow;
            synchronized (conversation) {
                handle = h;
                cancelNow = ended;
            }
            if (cancelNow && h != null) {
                h.cancel();
            }
        }

        @Override
        public void emit(Event event) {
            switch (event.kind()) {
                case RUN_STARTED, RUN_FINISHED, RUN_FAILED -> throw new IllegalArgumentException(
                        event.kind() + " is emitted by the hub; call finish() or fail()");
                default -> {
                }
            }
            synchronized (conversation) {
                if (!ended) {
                    emitLocked(this, event, null);
                }
            }
        }

        @Override
        public CompletionStage<ApprovalDecision> requestApproval(ApprovalRequest r) {
            Pending p;
            synchronized (conversation) {
                if (ended) {
                    return CompletableFuture.failedFuture(new CancellationException("the run has ended"));
                }
                Event.ApprovalRequested event = new Event.ApprovalRequested(Ids.next("appr"), r.toolCallId(),
                        r.toolName(), r.description(), r.arguments(), r.reasoning(), r.risk());
                ApprovalRecord rec = new ApprovalRecord(conversation.id, request.runId(), conversation.lastSeq + 1,
                        event, ApprovalRecord.Status.PENDING, null, null, null);
                p = new Pending(rec, conversation, this);
                waiting.add(p);
                conversation.pending++;
                approvals.put(event.approvalId(), p);
                emitLocked(this, event, null);
            }
            if (shuttingDown) {
                suspendIfWaiting();
            }
            return p.decision.copy();
        }

        /** Records a decision once; false if the approval was decided already. */
        boolean resolve(Pending p, ApprovalDecision d) {
            synchronized (conversation) {
                if (!waiting.remove(p)) {
                    return false;
                }
                approvals.remove(p.record.approvalId());
                conversation.pending--;
                ApprovalRecord decided = p.record.decided(d.approved(), d.feedback(), d.decidedBy().id(),
                        clock.getAsLong());
                writeLocked(conversation, b -> b.putApproval(decided), null);
                emitLocked(this, new Event.ApprovalResolved(p.record.approvalId(), d.approved(), d.feedback(),
                        d.decidedBy().id()), () -> workers.execute(() -> p.decision.complete(d)));
            }
            return true;
        }

        @Override
        public void finish() {
            end(new Event.RunFinished());
        }

        /** A failure the runtime reports (its agent's, its upstream's, or its own): the operator hears of it. */
        @Override
        public void fail(ErrorCode code, String message) {
            Event.RunFailed failed = new Event.RunFailed(code, message);
            if (end(failed)) {
                log.warn("run {} of conversation {} failed with {}: {}", request.runId(), conversation.id,
                        code.wireCode(), failed.message());
            }
        }

        /** Stops the run for its client or for shutdown: routine, logged at INFO. */
        void cancel(ErrorCode code, String message) {
            cancelIf(() -> true, code, message);
        }

        /**
         * Ends the run for a shutdown if all it does is wait for a decision (see
         * {@link RunContext#requestApproval}): its approvals stay pending, to be answered after the restart.
         */
        void suspendIfWaiting() {
            cancelIf(() -> !waiting.isEmpty(), ErrorCode.UNAVAILABLE, "the gateway shut down while the run waited for "
                    + "an approval; answer it once the gateway is back and the run continues");
        }

        /** Cancels the run if it is still going and, checked under the conversation's lock, {@code condition} holds. */
        private void cancelIf(BooleanSupplier condition, ErrorCode code, String message) {
            RunHandle h;
            synchronized (conversation) {
                if (ended || !condition.getAsBoolean()) {
                    return;
                }
                h = handle;
                end(new Event.RunFailed(code, message));
            }
            log.info("run {} of conversation {} stopped with {}: {}", request.runId(), conversation.id, code.wireCode(),
                    message);
            if (h != null) {
                try {
                    h.cancel();
                } catch (RuntimeException e) {
                    log.warn("runtime {} failed to cancel run {}", runtime.id(), request.runId(), e);
                }
            }
        }

        /** Ends the run with its terminal event; false if it had ended already. */
        private boolean end(Event terminal) {
            List<Pending> abandoned;
            synchronized (conversation) {
                if (ended) {
                    return false;
                }
                emitLocked(this, terminal, null);
                ended = true;
                conversation.active = null;
                activeRuns.decrementAndGet();
                abandoned = new ArrayList<>(waiting);
                waiting.clear();
                // A run stopped by shutdown leaves its approvals pending in the store: answered
                // after a restart, they continue the work in a new run.
                boolean keep = terminal instanceof Event.RunFailed f && f.code() == ErrorCode.UNAVAILABLE;
                for (Pending p : abandoned) {
                    approvals.remove(p.record.approvalId());
                    conversation.pending--;
                    if (!keep) {
                        ApprovalRecord gone = p.record.cancelled("the run ended before a decision", clock.getAsLong());
                        writeLocked(conversation, b -> b.putApproval(gone), null);
                    }
                }
            }
            for (Pending p : abandoned) {
                p.decision.completeExceptionally(new CancellationException("the run ended before a decision"));
            }
            return true;
        }

        @Override
        public boolean isDone() {
            synchronized (conversation) {
                return ended;
            }
        }

        @Override
        public List<InputMessage> history() {
            Set<String> own;
            synchronized (conversation) {
                own = Set.copyOf(ownMessages);
            }
            List<InputMessage> all = store.messages(conversation.id);
            List<InputMessage> out = new ArrayList<>(all.size());
            for (InputMessage m : all) {
                if (!own.contains(m.id())) {
                    out.add(m);
                }
            }
            return out;
        }
    }

    /** Builds a hub; {@link #store} and {@link #runtime} are required. */
    public static final class Builder {
        private ConversationStore store;
        private AgentRuntime runtime;
        private Moderation moderation = Moderation.disabled();
        private LongSupplier clock = System::currentTimeMillis;
        private int workerThreads = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
        private int runsPerMinute;

        private Builder() {
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
