package dev.switchboard.core.spi;

import dev.switchboard.core.Event;

import java.util.Objects;

/**
 * A stored approval: the request as emitted, its state, and who decided it when.
 * {@code feedback}, {@code decidedBy} and {@code decidedAt} are null while pending.
 */
public record ApprovalRecord(String conversationId, String runId, long seq, Event.ApprovalRequested request,
                             Status status, String feedback, String decidedBy, Long decidedAt) {
    /** Where an approval stands; CANCELLED when its run ended without a decision. */
    public enum Status { PENDING, APPROVED, REJECTED, CANCELLED }

    public ApprovalRecord {
        Objects.requireNonNull(conversationId, "conversationId");
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(status, "status");
    }

    public String approvalId() {
        return request.approvalId();
    }

    /** This approval abandoned by its run. */
    public ApprovalRecord cancelled(String reason, long at) {
        return new ApprovalRecord(conversationId, runId, seq, request, Status.CANCELLED, reason, "gateway", at);
    }

    /** This approval decided. */
    public ApprovalRecord decided(boolean approved, String feedback, String decidedBy, long decidedAt) {
        return new ApprovalRecord(conversationId, runId, seq, request, approved ? Status.APPROVED : Status.REJECTED,
                feedback, decidedBy, decidedAt);
    }
}
