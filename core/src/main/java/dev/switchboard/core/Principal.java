package dev.switchboard.core;

import java.util.Objects;

/**
 * Who is on the other end of a connection or request: the token's subject, or anonymous
 * when authentication is off.
 *
 * <p>{@code credential} is the bearer token the principal presented (null when none), kept so a
 * runtime may forward it upstream. It is not part of who the principal is: it takes no part in
 * {@link #equals} and is never shown by {@link #toString}.
 */
public record Principal(String id, boolean anonymous, String credential) {
    /** The principal of every connection when no key is configured. */
    public static final Principal ANONYMOUS = new Principal("anonymous", true, null);

    public Principal {
        Objects.requireNonNull(id, "id");
    }

    public Principal(String id, boolean anonymous) {
        this(id, anonymous, null);
    }

    /** An authenticated principal. */
    public static Principal of(String id) {
        return new Principal(id, false, null);
    }

    /** An authenticated principal that presented this bearer token. */
    public static Principal of(String id, String credential) {
        return new Principal(id, false, credential);
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

    @Override
    public boolean equals(Object o) {
        return o instanceof Principal p && p.id.equals(id) && p.anonymous == anonymous;
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, anonymous);
    }

    @Override
    public String toString() {
        return "Principal[id=" + id + ", anonymous=" + anonymous + (credential == null ? "" : ", credential=***") + "]";
    }
}
