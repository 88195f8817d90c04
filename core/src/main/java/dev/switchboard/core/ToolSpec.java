package dev.switchboard.core;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.Objects;

/** A tool a frontend offers the agent: name, description and JSON-schema parameters. */
public record ToolSpec(String name, String description, JsonNode parameters) {
    public ToolSpec {
        Objects.requireNonNull(name, "name");
        description = description == null ? "" : description;
        parameters = Json.objectOrEmpty(parameters);
    }
}
