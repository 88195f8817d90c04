package dev.switchboard.core.spi;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Principal;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Approvals as an operator side sees them (the A2H REST module): it asks for approvals outside
 * any run, lists what is pending in every conversation and decides any of it, authenticated by
 * its own keys rather than by membership of a conversation.
 */
public interface OperatorApprovals {

    /**
     * Asks the people of a conversation to approve something outside any run, as the A2H side
     * does for an agent's function call: the request is stored and shown to every connection of
     * the conversation that can answer, now or when one joins. The conversation is created if
     * needed, with no owner. Completes with the approval once it is stored, so a read of the
     * store that follows sees it.
     */
    CompletableFuture<ApprovalRecord> requestApproval(String conversationId, ApprovalRequest request);

    /**
     * Decides an approval as an operator (the A2H side): any pending approval, of a run, of a
     * run lost to a restart, or asked from outside any run. Completes with null once the
     * decision is stored, else with the error (unknown, already decided, ...).
     */
    CompletableFuture<GatewayError> decideAsOperator(String approvalId, boolean approved, String feedback,
                                                     JsonNode payload, Principal by);

    /**
     * Pending approvals of every conversation, oldest first: what an operator may answer. Read
     * once every write queued before the call is stored, so an approval a client was shown is listed.
     */
    List<ApprovalRecord> pendingApprovals(int limit, int offset);

    /** Completes once every event and write emitted so far is stored. */
    CompletableFuture<Void> flushed();
}
