package dev.switchboard.core.internal;

import dev.switchboard.core.spi.ApprovalDecision;
import dev.switchboard.core.spi.ApprovalRecord;

import java.util.concurrent.CompletableFuture;

/** An approval the hub waits for, with the decision its asker waits on. */
final class PendingApproval {
    final ApprovalRecord record;
    final CompletableFuture<ApprovalDecision> decision = new CompletableFuture<>();
    final ConversationState conversation;
    /** The run that waits for it; null for an approval asked from outside any run. */
    final Run run;
    /** When it was asked, for the time to its decision. */
    final long askedNanos = System.nanoTime();
    /** When it was asked, by the clock, for the span of its wait. */
    final long askedMillis = System.currentTimeMillis();

    PendingApproval(ApprovalRecord record, ConversationState conversation, Run run) {
        this.record = record;
        this.conversation = conversation;
        this.run = run;
    }
}
