package dev.switchboard.core.spi;

import dev.switchboard.core.Event;

import java.util.Objects;

/**
 * A stored approval: the request as emitted, its state, and who decided it when.
 * {@code feedback}, {@code decidedBy} and {@code decidedAt} are null while pending.
 */
public record ApprovalRecord(String conversationId, String runId, long seq, Event.ApprovalRequested request,
                             Status status, String feedback, String decidedBy, Long decidedAt) {
    /** Where an approval stands. */
    public enum Status { PENDING, APPROVED, REJECTED }

    public ApprovalRecord {
        Objects.requireNonNull(conversationId, "conversationId");
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(status, "status");
    }

    public String approvalId() {
        return request.approvalId();
    }

    /** This approval decided. */
    public ApprovalRecord decided(boolean approved, String feedback, String decidedBy, long decidedAt) {
        return new ApprovalRecord(conversationId, runId, seq, request, approved ? Status.APPROVED : Status.REJECTED,
                feedback, decidedBy, decidedAt);
    }
}
