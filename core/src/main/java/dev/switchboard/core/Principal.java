package dev.switchboard.core;

import java.util.Objects;

/**
 * Who is on the other end of a connection or request: the token's subject, or anonymous
 * when authentication is off.
 */
public record Principal(String id, boolean anonymous) {
    /** The principal of every connection when no key is configured. */
    public static final Principal ANONYMOUS = new Principal("anonymous", true);

    public Principal {
        Objects.requireNonNull(id, "id");
    }

    /** An authenticated principal. */
    public static Principal of(String id) {
        return new Principal(id, false);
    }

    /**
     * True if this principal may use a conversation owned by {@code owner}. A conversation with
     * no owner (begun anonymously, or by the A2H side for a person to answer) is open to all.
     */
    public boolean mayUse(String owner) {
        return owner == null || !anonymous && id.equals(owner);
    }

    /** The owner recorded for a conversation this principal creates (null for anonymous). */
    public String ownerKey() {
        return anonymous ? null : id;
    }
}
