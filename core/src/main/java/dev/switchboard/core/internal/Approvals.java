package dev.switchboard.core.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Command;
import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Ids;
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

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongSupplier;

/**
 * Decisions on approvals, from the people of a conversation and from an operator, and approvals
 * asked from outside any run. An approval whose run or asker did not survive a restart is pending
 * in the store only: deciding it continues the work in a new run (see {@link Runs}).
 */
public final class Approvals implements OperatorApprovals {
    /** Logged under the hub's name, as every part of the hub logs. */
    private static final Logger log = LoggerFactory.getLogger(ConversationHub.class);

    private final ConversationStore store;
    private final ExecutorService workers;
    private final LongSupplier clock;
    private final ConversationTable table;
    private final Emitter emitter;
    private final Runs runs;

    public Approvals(ConversationStore store, ExecutorService workers, LongSupplier clock, ConversationTable table,
                     Emitter emitter, Runs runs) {
        this.store = store;
        this.workers = workers;
        this.clock = clock;
        this.table = table;
        this.emitter = emitter;
        this.runs = runs;
    }

    /** Decides one approval for a person who joined its conversation. */
    public void decide(Command.DecideApproval cmd, Subscriber from) {
        decide(cmd, from, false);
    }

    /**
     * Decides one approval. A person must have joined its conversation; an operator (the A2H
     * side, authenticated by its own keys) may decide any.
     */
    private void decide(Command.DecideApproval cmd, Subscriber from, boolean operator) {
        PendingApproval p = table.awaited.get(cmd.approvalId());
        if (p == null) {
            Optional<ApprovalRecord> stored = store.approval(cmd.approvalId());
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
                    runs.continueOrphans(c, List.of(cmd), from, !operator);
                }
            }
            return;
        }
        ConversationState c = p.conversation;
        if (!operator && (!table.memberOf(from, c.id) || !from.principal().mayUse(c.owner))) {
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

    @Override
    public CompletableFuture<ApprovalRecord> requestApproval(String conversationId, ApprovalRequest request) {
        Objects.requireNonNull(conversationId, "conversationId");
        Objects.requireNonNull(request, "request");
        return CompletableFuture.supplyAsync(() -> {
            while (true) {
                ConversationState c = table.load(conversationId);
                synchronized (c) {
                    if (c.retired) {
                        continue;
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
        }, workers).thenCompose(emitter::afterQueuedWrites);
    }

    @Override
    public CompletableFuture<Void> flushed() {
        return emitter.afterQueuedWrites(null);
    }

    @Override
    public CompletableFuture<GatewayError> decideAsOperator(String approvalId, boolean approved, String feedback,
                                                            JsonNode payload, Principal by) {
        CompletableFuture<GatewayError> result = new CompletableFuture<>();
        Subscriber operator = new OperatorReply(by, result);
        try {
            workers.execute(() -> {
                try {
                    decide(new Command.DecideApproval(approvalId, approved, feedback, payload), operator, true);
                    // A refusal has completed the result already; this only completes a decision.
                    emitter.runAfterQueuedWrites(() -> result.complete(null));
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
        return store.pendingApprovals(limit, offset);
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
            if (c.decidedExternally.contains(stored.approvalId())) {
                from.reject(GatewayError.field(ErrorCode.CONFLICT, "approval_id",
                        "approval " + stored.approvalId() + " was already decided"));
                return;
            }
            c.decidedExternally.add(stored.approvalId());
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
}
