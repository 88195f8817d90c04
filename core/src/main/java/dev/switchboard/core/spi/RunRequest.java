package dev.switchboard.core.spi;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Principal;
import dev.switchboard.core.ToolSpec;

import java.util.List;
import java.util.Objects;

/**
 * What a runtime is asked to do: the new messages of the run (the newest user message last),
 * the tools the frontend offers, and the frontend's context, state and forwarded properties
 * (each may be null).
 */
public record RunRequest(String conversationId, String runId, String parentRunId, Principal principal,
                         List<InputMessage> messages, List<ToolSpec> tools, JsonNode context, JsonNode state,
                         JsonNode forwardedProps, JsonNode metadata) {
    public RunRequest {
        Objects.requireNonNull(conversationId, "conversationId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(principal, "principal");
        messages = List.copyOf(messages);
        tools = tools == null ? List.of() : List.copyOf(tools);
    }
}
