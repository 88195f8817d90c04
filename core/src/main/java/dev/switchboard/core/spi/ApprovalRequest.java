package dev.switchboard.core.spi;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.RiskLevel;

import java.util.Objects;

/** A runtime's request for a person to approve one tool call. */
public record ApprovalRequest(String toolCallId, String toolName, String description, JsonNode arguments,
                              String reasoning, RiskLevel risk) {
    public ApprovalRequest {
        Objects.requireNonNull(toolCallId, "toolCallId");
        Objects.requireNonNull(toolName, "toolName");
        Objects.requireNonNull(risk, "risk");
    }
}
