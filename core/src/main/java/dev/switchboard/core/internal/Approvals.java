package dev.switchboard.core.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Command;
import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Ids;
import dev.switchboard.core.LogContext;
import dev.switchboard.core.Principal;
import dev.switchboard.core.Subscriber;
import dev.switchboard.core.spi.ApprovalDecision;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ApprovalRequest;
import dev.switchboard.core.spi.ConversationRecord;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.OperatorApprovals;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * Decisions on approvals, from the people of a conversation and from an operator, and approvals
 * asked from outside any run. An approval whose run or asker did not survive a restart is pending
 * in the store only: deciding it continues the work in a new run (see {@link Runs}).
 */
public final class Approvals implements OperatorApprovals {
    /** Logged under the hub's name, as every part of the hub logs. */
    private static final Logger log = LoggerFactory.getLogger(ConversationHub.class);
    /** Times an approval request tries to hold, or reach the writer of, its conversation, some 50 ms apart. */
    private static final int ASK_ATTEMPTS = 40;
    private static final long ASK_PAUSE_MS = 50;

    private final ConversationStore store;
    private final ExecutorService workers;
    private final LongSupplier clock;
    private final ConversationTable table;
    private final Emitter emitter;
    private final Runs runs;
    /** The cluster this node is part of; null when it runs alone. */
    private final ClusterLink cluster;
    private final HubMetrics metrics;

    public Approvals(ConversationStore store, ExecutorService workers, LongSupplier clock, ConversationTable table,
                     Emitter emitter, Runs runs, HubMetrics metrics) {
        this.cluster = runs.cluster;
        this.metrics = metrics;
        this.store = store;
        this.workers = workers;
        this.clock = clock;
        this.table = table;
        this.emitter = emitter;
        this.runs = runs;
        metrics.pendingApprovals(table.awaited::size);
    }

    /** Decides one approval for a person who joined its conversation. */
    public void decide(Command.DecideApproval cmd, Subscriber from) {
        decide(cmd, from, false, null);
    }

    /**
     * Decides one approval. A person must have joined its conversation; an operator (the A2H
     * side, authenticated by its own keys) may decide any. In a cluster, an approval of a run
     * another node owns is decided there: true when the decision went there ({@code done}, may be
     * null, runs when it was taken; a refusal reaches the subscriber).
     */
    private boolean decide(Command.DecideApproval cmd, Subscriber from, boolean operator, Runnable done) {
        PendingApproval p = table.awaited.get(cmd.approvalId());
        if (p == null && cluster != null && forwarded(cmd, from, operator, done)) {
            return true;
        }
        if (p == null) {
            ApprovalRecord unstored = table.unstoredDecisions.get(cmd.approvalId());
            Optional<ApprovalRecord> stored = unstored != null ? Optional.of(unstored) : store.approval(cmd.approvalId());
            if (stored.isEmpty()) {
                from.reject(GatewayError.field(ErrorCode.NOT_FOUND, "approval_id", "unknown approval_id " + cmd.approvalId()));
            } else if (!operator && !table.memberOf(from, stored.get().conversationId())) {
                from.reject(GatewayError.field(ErrorCode.FORBIDDEN, "approval_id",
                        "approval " + cmd.approvalId() + " belongs to a conversation this connection has not joined"));
            } else if (stored.get().status() != ApprovalRecord.Status.PENDING) {
                from.reject(GatewayError.field(ErrorCode.CONFLICT, "approval_id",
                        "approval " + cmd.approvalId() + " was already decided"));
            } else {
                // Pending in the store only: its run, or its asker, did not survive a restart.
                ConversationState c = operator ? table.load(stored.get().conversationId())
                        : table.access(stored.get().conversationId(), from, false).orElse(null);
                if (c == null) {
                    return false;
                }
                boolean open;
                synchronized (c) {
                    open = c.open.containsKey(cmd.approvalId());
                }
                if (!open) {
                    // Decided a moment ago; the store has not caught up.
                    from.reject(GatewayError.field(ErrorCode.CONFLICT, "approval_id",
                            "approval " + cmd.approvalId() + " was already decided"));
                    return false;
                }
                if (stored.get().runId() == null) {
                    holding(c, from, () -> decideStoredExternal(c, stored.get(), cmd, from));
                } else {
                    runs.continueOrphans(c, List.of(cmd), from, !operator);
                }
            }
            return false;
        }
        ConversationState c = p.conversation;
        if (!operator && (!table.memberOf(from, c.id) || !from.principal().mayUse(c.owner))) {
            from.reject(GatewayError.field(ErrorCode.FORBIDDEN, "approval_id",
                    "approval " + cmd.approvalId() + " belongs to a conversation this connection has not joined"));
            return false;
        }
        ApprovalDecision decision = new ApprovalDecision(cmd.approvalId(), cmd.approved(), cmd.feedback(),
                cmd.payload(), from.principal());
        boolean[] decided = {false};
        if (p.run != null) {
            decided[0] = p.run.resolve(p, decision);
        } else if (!holding(c, from, () -> decided[0] = resolveExternal(p, decision))) {
            return false;
        }
        if (!decided[0]) {
            from.reject(GatewayError.field(ErrorCode.CONFLICT, "approval_id",
                    "approval " + cmd.approvalId() + " was already decided"));
        } else {
            metrics.decided(cmd.approved(), from.dialect(), p.askedNanos);
            runs.traces.decided(p, cmd.approved(), from);
        }
        return false;
    }

    /**
     * In a cluster: sends the decision to the node that runs the approval's run, if another node
     * does; true when it went there or could not (the subscriber told why).
     */
    private boolean forwarded(Command.DecideApproval cmd, Subscriber from, boolean operator, Runnable done) {
        ConversationState c = conversationOf(cmd.approvalId());
        if (c == null || !operator && (!table.memberOf(from, c.id) || !from.principal().mayUse(c.owner))) {
            // Unknown here, or not theirs: the checks below say so.
            return false;
        }
        try {
            return cluster.forward(c, cmd, from, done);
        } catch (ClusterLink.ClusterUnavailable e) {
            from.reject(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway cluster cannot be reached; try again shortly"));
            return true;
        }
    }

    /** The conversation of an undecided approval: one in memory that shows it open, else the store's. */
    private ConversationState conversationOf(String approvalId) {
        for (ConversationState c : table.all()) {
            synchronized (c) {
                if (c.open.containsKey(approvalId)) {
                    return c;
                }
            }
        }
        return store.approval(approvalId).map(a -> table.load(a.conversationId())).orElse(null);
    }

    /**
     * Runs {@code emit}, which emits into the conversation outside any run, as its writer: in a
     * cluster it holds the conversation's lease meanwhile. False (the subscriber told why) when
     * another node writes the conversation.
     */
    private boolean holding(ConversationState c, Subscriber from, Runnable emit) {
        if (cluster == null) {
            emit.run();
            return true;
        }
        try {
            if (!cluster.hold(c)) {
                from.reject(GatewayError.of(ErrorCode.BUSY, "conversation " + c.id
                        + " has a run on another gateway node; try again when it ends"));
                return false;
            }
        } catch (ClusterLink.ClusterUnavailable e) {
            from.reject(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway cluster cannot be reached; try again shortly"));
            return false;
        }
        try {
            emit.run();
            return true;
        } finally {
            cluster.release(c);
        }
    }

    @Override
    public CompletableFuture<ApprovalRecord> requestApproval(String conversationId, ApprovalRequest request) {
        Objects.requireNonNull(conversationId, "conversationId");
        Objects.requireNonNull(request, "request");
        return CompletableFuture.supplyAsync(() -> {
            for (int attempt = 1; ; attempt++) {
                ConversationState c = table.load(conversationId);
                if (cluster != null && !cluster.hold(c)) {
                    // Another node writes the conversation (its run streams there): it asks, and stores.
                    Optional<CompletableFuture<ApprovalRecord>> there = cluster.askWriter(c, request);
                    if (there.isPresent()) {
                        return there.get();
                    }
                    // Its lease ended a moment ago, or is still this node's from before a restart.
                    if (attempt == ASK_ATTEMPTS) {
                        throw new IllegalStateException("conversation " + conversationId
                                + " is written by a node that does not answer; ask again shortly");
                    }
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(ASK_PAUSE_MS));
                    continue;
                }
                try {
                    ApprovalRecord asked = askLocked(c, request);
                    if (asked != null) {
                        return emitter.afterQueuedWrites(asked);
                    }
                } finally {
                    if (cluster != null) {
                        cluster.release(c);
                    }
                }
            }
        }, task -> workers.execute(LogContext.wrap(conversationId, null, task))).thenCompose(asked -> asked);
    }

    /** Emits an approval asked outside any run; null when the conversation left memory meanwhile. */
    private ApprovalRecord askLocked(ConversationState c, ApprovalRequest request) {
        synchronized (c) {
            if (c.retired) {
                return null;
            }
            if (runs.shuttingDown()) {
                throw new IllegalStateException("the gateway is shutting down");
            }
            c.touched = clock.getAsLong();
            if (!c.persisted) {
                c.persisted = true;
                ConversationRecord rec = new ConversationRecord(c.id, null, clock.getAsLong());
                emitter.writeLocked(c, b -> b.addConversation(rec), null);
            }
            Event.ApprovalRequested event = new Event.ApprovalRequested(Ids.next("appr"), request.toolCallId(),
                    request.toolName(), request.description(), request.arguments(), request.reasoning(),
                    request.risk());
            ApprovalRecord rec = new ApprovalRecord(c.id, null, c.lastSeq + 1, event,
                    ApprovalRecord.Status.PENDING, null, null, null);
            table.awaited.put(event.approvalId(), new PendingApproval(rec, c, null));
            c.pending++;
            emitter.emitLocked(c, null, event, null);
            return rec;
        }
    }

    @Override
    public CompletableFuture<Void> flushed() {
        return emitter.afterQueuedWrites(null);
    }

    @Override
    public CompletableFuture<GatewayError> decideAsOperator(String approvalId, boolean approved, String feedback,
                                                            JsonNode payload, Principal by) {
        return decideAsOperator(approvalId, approved, feedback, payload, by, "operator");
    }

    /**
     * {@link #decideAsOperator(String, boolean, String, JsonNode, Principal)}, {@code via} saying where
     * the decision came from (for metrics): {@code operator}, or a dialect's id for one another node sent.
     */
    CompletableFuture<GatewayError> decideAsOperator(String approvalId, boolean approved, String feedback,
                                                     JsonNode payload, Principal by, String via) {
        CompletableFuture<GatewayError> result = new CompletableFuture<>();
        Subscriber operator = new OperatorReply(by, result, via);
        try {
            workers.execute(() -> {
                try {
                    boolean elsewhere = decide(new Command.DecideApproval(approvalId, approved, feedback, payload),
                            operator, true, () -> result.complete(null));
                    // A refusal has completed the result already; this only completes a decision.
                    if (!elsewhere) {
                        emitter.runAfterQueuedWrites(() -> result.complete(null));
                    }
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

    @Override
    public List<ApprovalRecord> pendingApprovals(int limit, int offset) {
        emitter.afterQueuedWrites(null).join();
        if (cluster == null) {
            return store.pendingApprovals(limit, offset);
        }
        // What another node decided or requested reaches the store from that node a moment later.
        // The requests heard are read first: one stored in between is then in the store's page.
        List<ApprovalRecord> heard = table.heardUnstored();
        List<ApprovalRecord> stored = store.pendingApprovals(limit, offset);
        List<ApprovalRecord> page = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (ApprovalRecord a : stored) {
            if (!table.resolvedElsewhere(a)) {
                page.add(a);
            }
            ids.add(a.approvalId());
        }
        if (stored.size() < limit && !heard.isEmpty()) {
            // The store's last page: the requests heard from other nodes and not stored yet follow it.
            int skip = stored.isEmpty() ? Math.max(0, offset - store.countPendingApprovals()) : 0;
            heard.stream().filter(a -> !ids.contains(a.approvalId())).skip(skip)
                    .limit(Math.max(0, limit - stored.size())).forEach(page::add);
        }
        return page;
    }

    private boolean resolveExternal(PendingApproval p, ApprovalDecision d) {
        ConversationState c = p.conversation;
        synchronized (c) {
            if (!table.awaited.remove(p.record.approvalId(), p)) {
                return false;
            }
            c.pending--;
            ApprovalRecord decided = p.record.decided(d.approved(), d.feedback(), d.decidedBy().id(), clock.getAsLong());
            emitter.writeApprovalLocked(c, decided);
            emitter.emitLocked(c, null, new Event.ApprovalResolved(p.record.approvalId(), d.approved(), d.feedback(),
                    d.decidedBy().id()), () -> p.decision.complete(d));
        }
        return true;
    }

    private void decideStoredExternal(ConversationState c, ApprovalRecord stored, Command.DecideApproval cmd, Subscriber from) {
        synchronized (c) {
            if (c.decidedExternally == null) {
                c.decidedExternally = new HashSet<>();
            }
            if (!c.decidedExternally.add(stored.approvalId())) {
                from.reject(GatewayError.field(ErrorCode.CONFLICT, "approval_id",
                        "approval " + stored.approvalId() + " was already decided"));
                return;
            }
            ApprovalRecord decided = stored.decided(cmd.approved(), cmd.feedback(), from.principal().id(),
                    clock.getAsLong());
            emitter.writeApprovalLocked(c, decided);
            emitter.emitLocked(c, null, new Event.ApprovalResolved(stored.approvalId(), cmd.approved(), cmd.feedback(),
                    from.principal().id()), null);
        }
    }

    /** The subscriber an operator's decision answers through: it keeps the first error. */
    private static final class OperatorReply implements Subscriber {
        private final Principal principal;
        private final CompletableFuture<GatewayError> result;
        /** Where the decision came from: {@code operator} (A2H), or the dialect of another node's client. */
        private final String via;

        OperatorReply(Principal principal, CompletableFuture<GatewayError> result, String via) {
            this.principal = principal;
            this.result = result;
            this.via = via;
        }

        @Override
        public Principal principal() {
            return principal;
        }

        @Override
        public String dialect() {
            return via;
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
}
