package dev.switchboard.core.spi;

import java.util.List;
import java.util.Optional;

/**
 * Entry point of a runtime module, found with {@link java.util.ServiceLoader}; its
 * {@link #id()} is the {@code --runtime} value that selects it.
 */
public interface AgentRuntimeProvider {

    /** The runtime's id. */
    String id();

    /** Creates the runtime from the gateway's settings (configuration keys without the leading dashes). */
    AgentRuntime create(Settings settings);

    /**
     * Read-only access to the gateway's configuration, by option name without the dashes
     * (for example {@code openai-base-url}). Values are absent when not set.
     */
    @FunctionalInterface
    interface Settings {
        Optional<String> get(String key);

        /** Every value of a repeatable option (absent: empty). */
        default List<String> getAll(String key) {
            return get(key).map(v -> List.of(v.split("\n"))).orElse(List.of());
        }
    }
}
