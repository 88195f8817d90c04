package dev.switchboard.core;

import java.util.List;
import java.util.Objects;

/**
 * A message a frontend sends with a command, or one kept in a conversation's history.
 * {@code toolCalls} is set on assistant messages that called tools, {@code toolCallId} on
 * tool results; {@code content} is never null.
 */
public record InputMessage(String id, Role role, String content, List<ToolCallRef> toolCalls,
                           String toolCallId, String name) {
    public InputMessage {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(role, "role");
        content = content == null ? "" : content;
        toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
    }

    /** A plain text message. */
    public static InputMessage text(String id, Role role, String content) {
        return new InputMessage(id, role, content, List.of(), null, null);
    }
}
