package dev.switchboard.core.spi;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Principal;

/** A person's answer to an approval request; {@code feedback} and {@code payload} may be null. */
public record ApprovalDecision(String approvalId, boolean approved, String feedback, JsonNode payload,
                               Principal decidedBy) {
}
