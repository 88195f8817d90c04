package dev.switchboard.core;

import dev.switchboard.core.internal.SerialExecutor;
import dev.switchboard.core.internal.StoreWriter;
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
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
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
 * run on the hub's workers, which may read the store). An event gets its {@code seq} under the
 * conversation's lock and, under the same lock, goes to the conversation's in-memory tail and to
 * every subscriber's queue, on the thread that emits it; the {@link StoreWriter} stores it behind,
 * in batches. The tail holds every event not yet stored and the newest stored ones, so a joining
 * or resuming subscriber reads the store up to the tail and the tail after it, under the lock,
 * and misses nothing.
 *
 * <p>Cursors across a crash: before an event with a {@code seq} above the conversation's
 * reservation reaches anyone, the hub stores a new reservation ({@link StoreBatch.Reservation}), so
 * after a {@code kill -9} the conversation's next {@code seq} comes after every one a client may
 * hold, and the events lost with the crash leave a gap. A cursor that names no event (one in the
 * gap) is answered with everything from the start of the last run stored before it: a resync the
 * client can splice in by {@code seq}, never a silent skip.
 */
public final class ConversationHub implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConversationHub.class);
    private static final int REPLAY_PAGE = 500;
    private static final long IDLE_EVICT_MS = TimeUnit.MINUTES.toMillis(5);
    /** Stored events a conversation's tail keeps for resumes that need no store read. */
    private static final int TAIL_KEPT = 256;
    /** How many seqs one reservation covers: a store write before every this many events of a conversation. */
    static final long RESERVATION = 1 << 16;

    private final ConversationStore store;
    private final AgentRuntime runtime;
    private final Moderation moderation;
    private final RateLimiter runLimiter;
    private final LongSupplier clock;
    private final StoreWriter writer;
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
        this.writer = new StoreWriter(store);
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
        timer.scheduleWithFixedDelay(() -> writer.run(this::evictIdle), 1, 1, TimeUnit.MINUTES);
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
                c.newestRunStart = Math.max(c.newestRunStart, started.seq());
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
            if (joined != null) {
                for (String id : joined) {
                    Conversation c = conversations.get(id);
                    if (c != null) {
                        synchronized (c) {
                            c.subscribers.remove(s);
                        }
                    }
                }
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
        List<ApprovalRecord> open = rec.isPresent() ? store.pendingApprovals(id) : List.of();
        Conversation fresh = new Conversation(id, rec.map(ConversationRecord::owner).orElse(null),
                rec.isPresent(), lastSeq, open, clock.getAsLong());
        Conversation prior = conversations.putIfAbsent(id, fresh);
        return prior != null ? prior : fresh;
    }

    /**
     * Runs on the store writer: forgets conversations nobody uses, after their writes are stored,
     * and gives back the seqs they reserved and did not use.
     */
    private void evictIdle() {
        long now = clock.getAsLong();
        conversations.values().removeIf(c -> {
            synchronized (c) {
                if (c.active != null || !c.subscribers.isEmpty() || c.inFlight != 0 || c.pending != 0
                        || now - c.touched <= IDLE_EVICT_MS) {
                    return false;
                }
                // Before it leaves the map: whoever loads it next reads the released reservation.
                if (c.reserved > c.lastSeq) {
                    store.write(new StoreBatch().reserve(c.id, c.lastSeq));
                }
                c.retired = true;
                return true;
            }
        });
    }

    /**
     * Joins a subscriber to a conversation's fan-out. With a cursor it first gets every event
     * after it. Without one it gets the active run from its start (so a display that joins mid-run
     * is whole) and, if it can answer them, the approvals still pending that the run's replay did
     * not show. A cursor that names no event of the conversation (it was lost in a crash, or never
     * was) gets everything from the start of the last run stored before it (from the first event
     * when there is none): everything the client holds before that start is stored as it saw it, so
     * it drops what it holds from there on and takes what follows.
     *
     * <p>What is stored is read outside the conversation's lock, page by page, until what is left
     * is in the tail; the rest, and the join, happen under the lock, so nothing emitted meanwhile
     * is missed or seen twice.
     */
    private void subscribe(Conversation c, Subscriber s, long afterSeq, boolean catchUp) {
        memberships.computeIfAbsent(s, k -> ConcurrentHashMap.newKeySet()).add(c.id);
        long from;
        long lastSeq;
        boolean idle;
        synchronized (c) {
            if (c.subscribers.contains(s)) {
                return;
            }
            from = afterSeq;
            lastSeq = c.lastSeq;
            idle = c.active == null;
            if (afterSeq < 0 && (catchUp || afterSeq == Command.Subscribe.LAST_RUN)) {
                from = c.active == null || c.active.startSeq == 0 ? -1 : c.active.startSeq - 1;
            }
        }
        if (from < 0 && afterSeq == Command.Subscribe.LAST_RUN) {
            from = lastRunStart(c, lastSeq) - 1;
            if (from < 0 && idle) {
                // No run to reattach to, active or past: nothing to resume.
                s.caughtUp();
            }
        }
        long cursorGiven = afterSeq;
        if (afterSeq > 0) {
            if (exists(c, afterSeq)) {
                prime(c, s, afterSeq);
            } else {
                from = Math.max(0, lastRunStart(c, Math.min(afterSeq, lastSeq)) - 1);
                log.info("cursor {} of conversation {} names no event (lost in a crash, or never sent);"
                        + " resending from seq {}", afterSeq, c.id, from + 1);
                cursorGiven = from;
            }
        }
        long cursor = from;
        boolean sent = false;
        while (true) {
            long tailFirst;
            synchronized (c) {
                if (c.subscribers.contains(s)) {
                    return;
                }
                tailFirst = c.tail.isEmpty() ? c.lastSeq + 1 : c.tail.peekFirst().seq();
                if (from < 0 || cursor + 1 >= tailFirst) {
                    join(c, s, from, cursor, cursorGiven, catchUp, sent);
                    return;
                }
            }
            // Everything before the tail is stored.
            List<Envelope> page = store.events(c.id, cursor, REPLAY_PAGE);
            for (Envelope e : page) {
                if (!s.deliver(e)) {
                    s.overflowed();
                    return;
                }
                cursor = e.seq();
                sent = true;
            }
            if (page.isEmpty()) {
                // Nothing stored after the cursor below the tail: a gap a crash left.
                cursor = Math.max(cursor, tailFirst - 1);
            }
        }
    }

    /**
     * The end of a join, under the conversation's lock: the tail after {@code cursor} (unless the
     * join is live, {@code from < 0}), the pending approvals a catch-up shows, and membership.
     */
    private void join(Conversation c, Subscriber s, long from, long cursor, long cursorGiven, boolean catchUp,
                      boolean sent) {
        if (from >= 0) {
            for (Envelope e : c.tail) {
                if (e.seq() > cursor) {
                    if (!s.deliver(e)) {
                        s.overflowed();
                        return;
                    }
                    cursor = e.seq();
                    sent = true;
                }
            }
        }
        if (cursorGiven >= 0 && !sent && c.active == null) {
            // Nothing after the cursor, and nothing to come.
            s.caughtUp();
        }
        if (cursorGiven < 0 && catchUp && s.answersApprovals()) {
            for (ApprovalRecord a : c.open.values()) {
                if (a.seq() > from && a.seq() <= cursor) {
                    continue;
                }
                for (Envelope e : read(c, a.seq() - 1, 1)) {
                    if (e.seq() == a.seq() && !s.deliver(e)) {
                        s.overflowed();
                        return;
                    }
                }
            }
        }
        c.subscribers.add(s);
    }

    /**
     * Events of the conversation after {@code afterSeq}, at most {@code limit}, in order: from the
     * store below the tail, from the tail above it.
     */
    private List<Envelope> read(Conversation c, long afterSeq, int limit) {
        long tailFirst;
        List<Envelope> tail = new ArrayList<>();
        synchronized (c) {
            tailFirst = c.tail.isEmpty() ? c.lastSeq + 1 : c.tail.peekFirst().seq();
            for (Envelope e : c.tail) {
                if (e.seq() > afterSeq) {
                    if (tail.size() == limit) {
                        break;
                    }
                    tail.add(e);
                }
            }
        }
        if (afterSeq + 1 >= tailFirst) {
            return tail;
        }
        List<Envelope> out = new ArrayList<>(limit);
        for (Envelope e : store.events(c.id, afterSeq, limit)) {
            if (e.seq() < tailFirst) {
                out.add(e);
            }
        }
        for (int i = 0; i < tail.size() && out.size() < limit; i++) {
            out.add(tail.get(i));
        }
        return out;
    }

    /** Whether the conversation has the event {@code seq}. */
    private boolean exists(Conversation c, long seq) {
        List<Envelope> at = read(c, seq - 1, 1);
        return !at.isEmpty() && at.get(0).seq() == seq;
    }

    /**
     * A client resuming from a cursor inside a run was shown that run up to the cursor: hands
     * those events to the subscriber to prime its dialect's state, so what follows continues the
     * run as the client saw it (no second start of a message, chunk numbers that go on).
     */
    private void prime(Conversation c, Subscriber s, long cursor) {
        List<Envelope> at = read(c, cursor - 1, 1);
        if (at.isEmpty() || at.get(0).runId() == null || at.get(0).event().kind() == Event.Kind.RUN_FINISHED
                || at.get(0).event().kind() == Event.Kind.RUN_FAILED) {
            return;
        }
        long after = lastRunStart(c, cursor) - 1;
        if (after < 0) {
            return;
        }
        while (after < cursor) {
            List<Envelope> page = new ArrayList<>(read(c, after, (int) Math.min(REPLAY_PAGE, cursor - after)));
            page.removeIf(e -> e.seq() > cursor);
            if (page.isEmpty()) {
                return;
            }
            s.prime(page);
            after = page.get(page.size() - 1).seq();
        }
    }

    /** The seq of the conversation's last RunStarted at or before {@code lastSeq}, or 0 for none. */
    private long lastRunStart(Conversation c, long lastSeq) {
        synchronized (c) {
            if (c.newestRunStart > 0 && c.newestRunStart <= lastSeq) {
                return c.newestRunStart;
            }
        }
        for (long to = lastSeq; to > 0; to -= REPLAY_PAGE) {
            long after = Math.max(0, to - REPLAY_PAGE);
            // Read the whole window: the store answers only up to the tail, the tail the rest.
            List<Envelope> window = new ArrayList<>();
            while (after < to) {
                List<Envelope> page = read(c, after, REPLAY_PAGE);
                if (page.isEmpty()) {
                    break;
                }
                for (Envelope e : page) {
                    if (e.seq() <= to) {
                        window.add(e);
                    }
                }
                after = page.get(page.size() - 1).seq();
            }
            for (int i = window.size() - 1; i >= 0; i--) {
                if (window.get(i).event().kind() == Event.Kind.RUN_STARTED) {
                    return window.get(i).seq();
                }
            }
        }
        return 0;
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
                c.subscribers.removeIf(s -> {
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
                });
            }
            subscribe(c, from, -1, true);
            long now = clock.getAsLong();
            for (InputMessage m : fresh) {
                run.ownMessages.add(m.id());
                writeMessageLocked(c, new StoreBatch.MessageRow(c.id, runId, m, now));
            }
            emitLocked(run, new Event.RunStarted(cmd.parentRunId()), run::launch);
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
                boolean open;
                synchronized (c) {
                    open = c.open.containsKey(cmd.approvalId());
                }
                if (!open) {
                    // Decided a moment ago; the store has not caught up.
                    from.reject(GatewayError.field(ErrorCode.CONFLICT, "approval_id",
                            "approval " + cmd.approvalId() + " was already decided"));
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

    /** Completes once every event and write emitted so far is stored. */
    public CompletableFuture<Void> flushed() {
        return afterQueuedWrites(null);
    }

    /** Completes with {@code value} once every write queued so far is stored. */
    private <T> CompletableFuture<T> afterQueuedWrites(T value) {
        CompletableFuture<T> stored = new CompletableFuture<>();
        writer.run(() -> stored.complete(value));
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
                    writer.run(() -> result.complete(null));
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

    /**
     * Pending approvals of every conversation, oldest first: what an operator may answer. Read
     * once every write queued before the call is stored, so an approval a client was shown is listed.
     */
    public List<ApprovalRecord> pendingApprovals(int limit, int offset) {
        afterQueuedWrites(null).join();
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
            writeApprovalLocked(c, decided);
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
            writeApprovalLocked(c, decided);
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
        List<ApprovalRecord> pending;
        synchronized (c) {
            pending = c.open.values().stream().filter(a -> a.runId() != null).toList();
        }
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
                writeApprovalLocked(c, a);
                Runnable then = i == decided.size() - 1 ? () -> run.continueWith(decided) : null;
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
        for (InputMessage m : messagesOf(c)) {
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

    /**
     * Queues a write for the conversation; the caller holds its lock. {@code committed} (may be
     * null) runs under the lock once the write is stored.
     */
    private void writeLocked(Conversation c, java.util.function.Consumer<StoreBatch> fill, Runnable committed) {
        c.inFlight++;
        writer.write(fill, () -> {
            synchronized (c) {
                c.inFlight--;
                if (committed != null) {
                    committed.run();
                }
            }
        });
    }

    /** Queues a history message; until it is stored, {@link #messagesOf} reads it from memory. */
    private void writeMessageLocked(Conversation c, StoreBatch.MessageRow row) {
        c.unstoredMessages.add(row);
        writeLocked(c, b -> b.addMessage(row), () -> c.unstoredMessages.remove(row));
    }

    /** Queues an approval's new state and keeps the conversation's pending approvals in step. */
    private void writeApprovalLocked(Conversation c, ApprovalRecord a) {
        if (a.status() == ApprovalRecord.Status.PENDING) {
            c.open.put(a.approvalId(), a);
        } else {
            c.open.remove(a.approvalId());
        }
        writeLocked(c, b -> b.putApproval(a), null);
    }

    /** The conversation's history messages, oldest first: the stored ones, then those on their way. */
    private List<InputMessage> messagesOf(Conversation c) {
        List<StoreBatch.MessageRow> unstored;
        synchronized (c) {
            unstored = List.copyOf(c.unstoredMessages);
        }
        // Read after the copy: a message stored in between is in both, and counted once.
        List<InputMessage> all = new ArrayList<>(store.messages(c.id));
        Set<String> ids = new HashSet<>();
        all.forEach(m -> ids.add(m.id()));
        for (StoreBatch.MessageRow row : unstored) {
            if (ids.add(row.message().id())) {
                all.add(row.message());
            }
        }
        return all;
    }

    /**
     * Stamps and emits an event of the run; the caller holds the conversation's lock.
     * {@code after} (may be null) runs on a worker once every subscriber has it.
     */
    private void emitLocked(Run run, Event event, Runnable after) {
        emitLocked(run.conversation, run, event, after);
    }

    /**
     * Stamps and emits an event of the conversation, of {@code run} or of no run (null);
     * the caller holds the conversation's lock. {@code after} (may be null) runs on a worker
     * once every subscriber has it.
     */
    private void emitLocked(Conversation c, Run run, Event event, Runnable after) {
        emitLocked(c, run, run == null ? null : run.request.runId(), event, after);
    }

    /**
     * The one way an event leaves the hub: it gets the conversation's next seq (reserving more
     * first when the reservation is used up), joins the tail, goes to every subscriber's queue and
     * is queued for the store.
     */
    private void emitLocked(Conversation c, Run run, String runId, Event event, Runnable after) {
        long seq = c.lastSeq + 1;
        if (seq > c.reserved) {
            // Stored before any client may see the seq: a restart after a crash starts above it.
            long upTo = seq + RESERVATION - 1;
            store.write(new StoreBatch().reserve(c.id, upTo));
            c.reserved = upTo;
        }
        c.lastSeq = seq;
        Envelope env = new Envelope(c.id, runId, seq, clock.getAsLong(), event);
        Object prepared = store.prepare(env);
        StoreBatch.MessageRow row = messageOf(env);
        if (row != null) {
            c.unstoredMessages.add(row);
            if (run != null) {
                run.ownMessages.add(row.message().id());
            }
        }
        ApprovalRecord approval = null;
        if (event instanceof Event.ApprovalRequested a) {
            approval = new ApprovalRecord(c.id, runId, seq, a, ApprovalRecord.Status.PENDING, null, null, null);
            c.open.put(a.approvalId(), approval);
        }
        if (event.kind() == Event.Kind.RUN_STARTED) {
            c.newestRunStart = seq;
        }
        c.tail.addLast(env);
        fanOutLocked(c, env);
        ApprovalRecord pending = approval;
        writeLocked(c, b -> {
            b.addEvent(env, prepared);
            if (row != null) {
                b.addMessage(row);
            }
            if (pending != null) {
                b.putApproval(pending);
            }
        }, () -> {
            if (row != null) {
                c.unstoredMessages.remove(row);
            }
            stored(c, seq);
        });
        if (after != null) {
            workers.execute(after);
        }
    }

    /** Event {@code seq} and all before it are stored: the tail keeps only what resumes need. */
    private static void stored(Conversation c, long seq) {
        ArrayDeque<Envelope> tail = c.tail;
        while (tail.size() > TAIL_KEPT && tail.peekFirst().seq() <= seq) {
            tail.pollFirst();
        }
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

    /** Hands the event to every subscriber of the conversation; the caller holds its lock. */
    private void fanOutLocked(Conversation c, Envelope env) {
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
            writer.stop().join();
            releaseReservations();
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

    /**
     * After a clean stop every event is stored: gives back the seqs each conversation reserved and
     * did not use, so the next start goes on without a gap.
     */
    private void releaseReservations() {
        StoreBatch released = new StoreBatch();
        for (Conversation c : conversations.values()) {
            synchronized (c) {
                if (c.reserved > c.lastSeq) {
                    released.reserve(c.id, c.lastSeq);
                    c.reserved = c.lastSeq;
                }
            }
        }
        try {
            store.write(released);
        } catch (RuntimeException e) {
            log.warn("could not give back {} of reserved seqs; their next events skip them",
                    Plural.of(released.reservations().size(), "conversation"), e);
        }
    }

    @Override
    public void close() {
        shutdown(Duration.ZERO).join();
    }

    // ---- state ---------------------------------------------------------------------------

    /** Live state of one conversation; fields guarded by its monitor. */
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
        /** The highest seq whose reservation is stored: events up to it may be shown before they are. */
        long reserved;
        /** The seq of the conversation's newest RunStarted, when known (0: read the log). */
        long newestRunStart;
        /** Stored-only approvals of no run decided since this state was loaded (a once-guard). */
        final Set<String> decidedExternally = new HashSet<>(0);
        final List<Subscriber> subscribers = new ArrayList<>(2);
        /** Every event not yet stored, after the newest stored ones (at most TAIL_KEPT of those). */
        final ArrayDeque<Envelope> tail = new ArrayDeque<>();
        /** History messages queued and not yet stored. */
        final List<StoreBatch.MessageRow> unstoredMessages = new ArrayList<>(2);
        /** Undecided approvals by id, in seq order, whether stored yet or not. */
        final Map<String, ApprovalRecord> open = new LinkedHashMap<>();

        Conversation(String id, String owner, boolean persisted, long lastSeq, List<ApprovalRecord> open,
                     long touched) {
            this.id = id;
            this.owner = owner;
            this.persisted = persisted;
            this.lastSeq = lastSeq;
            this.reserved = lastSeq;
            this.touched = touched;
            open.forEach(a -> this.open.put(a.approvalId(), a));
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
        /** The hub is stopping the run: the runtime is told first, and nothing it emits or ends counts now. */
        boolean stopping;
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
                cancelNow = ended || stopping;
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
            writer.awaitRoom();
            synchronized (conversation) {
                if (!ended && !stopping) {
                    emitLocked(this, event, null);
                }
            }
        }

        @Override
        public CompletionStage<ApprovalDecision> requestApproval(ApprovalRequest r) {
            Pending p;
            synchronized (conversation) {
                if (ended || stopping) {
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
                writeApprovalLocked(conversation, decided);
                emitLocked(this, new Event.ApprovalResolved(p.record.approvalId(), d.approved(), d.feedback(),
                        d.decidedBy().id()), () -> p.decision.complete(d));
            }
            return true;
        }

        @Override
        public void finish() {
            end(new Event.RunFinished(), false);
        }

        /** A failure the runtime reports (its agent's, its upstream's, or its own): the operator hears of it. */
        @Override
        public void fail(ErrorCode code, String message) {
            Event.RunFailed failed = new Event.RunFailed(code, message);
            if (end(failed, false)) {
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
                if (ended || stopping || !condition.getAsBoolean()) {
                    return;
                }
                stopping = true;
                h = handle;
            }
            log.info("run {} of conversation {} stopped with {}: {}", request.runId(), conversation.id, code.wireCode(),
                    message);
            // The runtime hears of it before anyone sees the run end (outside the lock: it may take a while).
            if (h != null) {
                try {
                    h.cancel();
                } catch (RuntimeException e) {
                    log.warn("runtime {} failed to cancel run {}", runtime.id(), request.runId(), e);
                }
            }
            end(new Event.RunFailed(code, message), true);
        }

        /**
         * Ends the run with its terminal event; false if it had ended already, or if the runtime
         * ends it ({@code byHub} false) while the hub is stopping it.
         */
        private boolean end(Event terminal, boolean byHub) {
            synchronized (conversation) {
                if (ended || stopping && !byHub) {
                    return false;
                }
                ended = true;
                List<Pending> abandoned = new ArrayList<>(waiting);
                waiting.clear();
                // Before the terminal event reaches anyone: whoever sees the run end finds its
                // approvals' decisions ended too. The run has ended, so nothing it emits now counts.
                for (Pending p : abandoned) {
                    p.decision.completeExceptionally(new CancellationException("the run ended before a decision"));
                }
                emitLocked(this, terminal, null);
                conversation.active = null;
                activeRuns.decrementAndGet();
                // A run stopped by shutdown leaves its approvals pending in the store: answered
                // after a restart, they continue the work in a new run.
                boolean keep = terminal instanceof Event.RunFailed f && f.code() == ErrorCode.UNAVAILABLE;
                for (Pending p : abandoned) {
                    approvals.remove(p.record.approvalId());
                    conversation.pending--;
                    if (!keep) {
                        ApprovalRecord gone = p.record.cancelled("the run ended before a decision", clock.getAsLong());
                        writeApprovalLocked(conversation, gone);
                    }
                }
            }
            return true;
        }

        @Override
        public boolean isDone() {
            synchronized (conversation) {
                return ended || stopping;
            }
        }

        @Override
        public List<InputMessage> history() {
            Set<String> own;
            synchronized (conversation) {
                own = Set.copyOf(ownMessages);
            }
            List<InputMessage> all = messagesOf(conversation);
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
