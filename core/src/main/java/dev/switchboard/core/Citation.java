package dev.switchboard.core;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.Objects;

/** A source an answer cites; {@code page} is optional (null). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Citation(String id, String sourceType, String title, String url, Integer page) {
    public Citation {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(sourceType, "sourceType");
        Objects.requireNonNull(title, "title");
        Objects.requireNonNull(url, "url");
    }
}
