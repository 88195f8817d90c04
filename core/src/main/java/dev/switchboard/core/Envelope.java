package dev.switchboard.core;

import java.util.Objects;

/**
 * An event as the hub emitted it: stamped with its conversation, run, per-conversation
 * sequence number and emission time (epoch milliseconds).
 */
public record Envelope(String conversationId, String runId, long seq, long timestamp, Event event) {
    public Envelope {
        Objects.requireNonNull(conversationId, "conversationId");
        Objects.requireNonNull(event, "event");
        if (seq < 1) {
            throw new IllegalArgumentException("seq starts at 1, got " + seq);
        }
    }
}
