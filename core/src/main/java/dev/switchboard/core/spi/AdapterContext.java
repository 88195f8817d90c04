package dev.switchboard.core.spi;

/**
 * What an adapter may know of the gateway when it is created: the limits it must enforce.
 *
 * @param maxContentChars the longest user message content a dialect accepts (10,000 by the specs)
 */
public record AdapterContext(int maxContentChars) {
    public AdapterContext {
        if (maxContentChars < 1) {
            throw new IllegalArgumentException("maxContentChars must be positive, got " + maxContentChars);
        }
    }

    /** The limits the specs set. */
    public static AdapterContext defaults() {
        return new AdapterContext(10_000);
    }
}
