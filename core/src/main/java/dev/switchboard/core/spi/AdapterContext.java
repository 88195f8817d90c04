package dev.switchboard.core.spi;

import java.util.Objects;
import java.util.Optional;

/**
 * What an adapter may know of the gateway when it is created: the limits it must enforce, and the
 * configuration, where it reads the options its provider declares ({@link Plugin#options()}).
 *
 * @param maxContentChars the longest user message content a dialect accepts (10,000 by the specs)
 * @param settings        the gateway's configuration
 */
public record AdapterContext(int maxContentChars, Settings settings) {
    public AdapterContext {
        if (maxContentChars < 1) {
            throw new IllegalArgumentException("maxContentChars must be positive, got " + maxContentChars);
        }
        Objects.requireNonNull(settings, "settings");
    }

    /** These limits, and no option set. */
    public AdapterContext(int maxContentChars) {
        this(maxContentChars, key -> Optional.empty());
    }

    /** The limits the specs set, and no option set. */
    public static AdapterContext defaults() {
        return new AdapterContext(10_000);
    }

    /** The same limits with this configuration. */
    public AdapterContext withSettings(Settings settings) {
        return new AdapterContext(maxContentChars, settings);
    }
}
