package dev.switchboard.core.spi;

import java.util.List;

/**
 * What every provider a module offers has in common: an id, and the options it reads. The host
 * finds providers with {@link java.util.ServiceLoader}, on its class path and in the jars of its
 * plugin directory alike, and collects their options for {@code --help}, flags, environment
 * variables and the config file; two providers declaring one option name differently stop start-up.
 */
public interface Plugin {
    /** The provider's id, unique among the providers of its kind. */
    String id();

    /** The options the provider reads through {@link Settings}; none by default. */
    default List<OptionSpec> options() {
        return List.of();
    }
}
