package dev.switchboard.core;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * A token bucket per key: {@code perMinute} tokens a minute, bursts up to that many. Keys that
 * have refilled completely are forgotten, so memory follows the active clients.
 */
public final class RateLimiter {
    private static final long MINUTE_MS = 60_000;

    private final int perMinute;
    private final LongSupplier clock;
    private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();

    private static final class Bucket {
        double tokens;
        long updated;

        Bucket(double tokens, long updated) {
            this.tokens = tokens;
            this.updated = updated;
        }
    }

    /** {@code perMinute} of 0 or less means unlimited. */
    public RateLimiter(int perMinute, LongSupplier clock) {
        this.perMinute = perMinute;
        this.clock = clock;
    }

    /** The tokens a key gets a minute; 0 or less: unlimited. */
    public int perMinute() {
        return perMinute;
    }

    /**
     * Takes a token for {@code key}. Returns 0 when allowed, else the whole seconds to wait
     * before a token is there (at least 1).
     */
    public long acquire(String key) {
        if (perMinute <= 0) {
            return 0;
        }
        long now = clock.getAsLong();
        long[] wait = {0};
        buckets.compute(key, (k, b) -> {
            if (b == null) {
                b = new Bucket(perMinute, now);
            } else {
                b.tokens = Math.min(perMinute, b.tokens + (now - b.updated) * perMinute / (double) MINUTE_MS);
                b.updated = now;
            }
            if (b.tokens >= 1) {
                b.tokens -= 1;
            } else {
                double missing = 1 - b.tokens;
                wait[0] = Math.max(1, (long) Math.ceil(missing * MINUTE_MS / perMinute / 1000.0));
            }
            return b;
        });
        if (buckets.size() > 10_000) {
            buckets.values().removeIf(b -> b.tokens + (now - b.updated) * perMinute / (double) MINUTE_MS >= perMinute);
        }
        return wait[0];
    }
}
