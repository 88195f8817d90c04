package dev.switchboard.core.spi;

import java.util.List;
import java.util.Optional;

/**
 * Read-only access to the gateway's configuration, by option name without the dashes (for example
 * {@code openai-base-url}). The host has checked every value of a declared option against its
 * {@link OptionSpec} before a plugin reads it. A value is absent when it is neither given nor
 * defaulted.
 */
@FunctionalInterface
public interface Settings {
    /** The option's value, or its default; absent when both are empty. */
    Optional<String> get(String key);

    /** Every value of a repeatable option (absent: empty). */
    default List<String> getAll(String key) {
        return get(key).map(v -> List.of(v.split("\n"))).orElse(List.of());
    }

    /** The value of an {@link OptionSpec.Type#INT} option, or {@code fallback} when absent. */
    default int integer(String key, int fallback) {
        return get(key).map(v -> Integer.parseInt(v.strip())).orElse(fallback);
    }

    /** The value of a {@link OptionSpec.Type#BOOL} option, or {@code fallback} when absent. */
    default boolean bool(String key, boolean fallback) {
        return get(key).map(v -> Boolean.parseBoolean(v.strip())).orElse(fallback);
    }
}
