package dev.switchboard.core.spi;

import java.util.Objects;

/** A stored conversation: its id, the principal that owns it (null for anonymous) and when it began. */
public record ConversationRecord(String id, String owner, long createdAt) {
    public ConversationRecord {
        Objects.requireNonNull(id, "id");
    }
}
