package dev.switchboard.core.spi;

import dev.switchboard.core.GatewayError;

import java.util.Optional;
import java.util.Set;

/**
 * One wire dialect: how connections are routed to it and how to make a session for each.
 */
public interface WireAdapter {

    /** The dialect's id, also its configuration key (for example {@code hai}). */
    String id();

    /** WebSocket paths served by this dialect (for example {@code /ws}, {@code /hai/ws}); none by default. */
    default Set<String> webSocketPaths() {
        return Set.of();
    }

    /** {@code Sec-WebSocket-Protocol} values that select this dialect on a shared path. */
    default Set<String> subprotocols() {
        return Set.of();
    }

    /**
     * Whether this dialect takes a shared path's connections when no subprotocol was asked
     * for and no dialect's probe matched the first frame.
     */
    default boolean fallback() {
        return false;
    }

    /**
     * The query parameter that names this dialect's conversation in a WebSocket URL ({@code
     * session_id}, {@code threadId}), if it has one. On a shared path a query naming it chooses this
     * dialect at the upgrade, so a client that reconnects with {@code ?<param>=<id>&last_seq=<n>} is
     * joined and replayed before it sends anything.
     */
    default Optional<String> conversationParameter() {
        return Optional.empty();
    }

    /** Looks at the first text frame of a connection on a shared path. */
    default Probe probe(String firstFrame) {
        return Probe.NO_MATCH;
    }

    /** Whether a person on this dialect can answer an approval request. */
    boolean answersApprovals();

    /**
     * Checks a WebSocket upgrade to this dialect before it is accepted: an error refuses it
     * (MISSING_FIELD and INVALID_FIELD are answered 400, others with their HTTP status), and
     * nothing is stored; null accepts it. By default only a malformed resume cursor is refused
     * ({@link Cursors#refusal}), as every dialect reads the cursor alike.
     */
    default GatewayError refuseUpgrade(SessionContext context) {
        return Cursors.refusal(context);
    }

    /** Where this dialect's WebSocket frames carry each event's {@code seq}, the resume cursor. */
    default Cursors.Style cursorStyle() {
        return Cursors.Style.NONE;
    }

    /** A new session for one connection to one of {@link #webSocketPaths()}. */
    default DialectSession newSession(SessionContext context) {
        throw new UnsupportedOperationException(id() + " serves no WebSocket paths");
    }

    /** Paths this dialect serves with {@code POST} requests (none by default). */
    default Set<String> httpPaths() {
        return Set.of();
    }

    /**
     * The conversation a {@code GET} of this path reattaches to, if the path is one of this
     * dialect's reattach paths: the server then streams it from the client's {@code Last-Event-ID}
     * (or the active or last run from its start) through {@link #newExchange} with nothing to decode.
     */
    default Optional<String> reattachConversation(String path) {
        return Optional.empty();
    }

    /** A new exchange for one request to one of {@link #httpPaths()}. */
    default HttpExchange newExchange(SessionContext context) {
        throw new UnsupportedOperationException(id() + " serves no HTTP paths");
    }
}
