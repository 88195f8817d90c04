package dev.switchboard.core.spi;

import dev.switchboard.core.Principal;

/**
 * Turns the credential a client presents (a bearer token, or none) into a principal.
 * Implementations must be thread-safe and must not block on the network.
 */
public interface Authenticator {

    /** The outcome of one authentication. */
    sealed interface Result {
        /** The client is this principal. */
        record Accepted(Principal principal) implements Result {
        }

        /** The credential is missing or not acceptable; {@code reason} is safe to show the client. */
        record Refused(String reason) implements Result {
        }
    }

    /** Authenticates a token; {@code token} is null when the client sent none. */
    Result authenticate(String token);

    /** Whether a credential is required; false means every client is anonymous. */
    boolean required();

    /**
     * Authentication off: every client is anonymous. A token is not checked; one a client presents
     * is kept as the principal's credential, for runtimes that forward it upstream.
     */
    static Authenticator anonymous() {
        return new Authenticator() {
            @Override
            public Result authenticate(String token) {
                return new Result.Accepted(token == null ? Principal.ANONYMOUS
                        : new Principal(Principal.ANONYMOUS.id(), true, token));
            }

            @Override
            public boolean required() {
                return false;
            }
        };
    }
}
