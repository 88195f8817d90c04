package dev.switchboard.core.spi;

import java.util.Optional;

/**
 * Entry point of an authentication module, found with {@link java.util.ServiceLoader}. At most one
 * provider may be configured; with none, every client is anonymous.
 */
public interface AuthenticatorProvider extends Plugin {
    /**
     * The authenticator its options describe, or empty when they are not set (this provider is
     * off). An {@link IllegalArgumentException} names the option that is wrong and why.
     */
    Optional<Authenticator> create(Settings settings);
}
