package dev.switchboard.core;

import java.util.Objects;

/** A tool call made by an assistant message: its id, tool name and JSON arguments text. */
public record ToolCallRef(String id, String name, String arguments) {
    public ToolCallRef {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        arguments = arguments == null ? "{}" : arguments;
    }
}
