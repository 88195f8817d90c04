package dev.switchboard.cluster.redis;

import java.time.Duration;
import java.util.Objects;

/**
 * How a node reaches Redis and how much live history it keeps there.
 *
 * @param url            {@code redis://HOST:PORT[/db]}
 * @param nodeId         this node's name in run leases and logs
 * @param leaseTtl       how long a run stays owned without renewal
 * @param streamMax      the most events a conversation's stream keeps (its {@code MAXLEN})
 * @param historyTtl     how long a conversation's stream and epoch outlive its last event
 * @param commandTimeout how long a command may take before it fails
 */
public record RedisBrokerConfig(String url, String nodeId, Duration leaseTtl, int streamMax, Duration historyTtl,
                                Duration commandTimeout) {
    public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(15);
    public static final int DEFAULT_STREAM_MAX = 10_000;
    public static final Duration DEFAULT_HISTORY_TTL = Duration.ofHours(1);
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(5);

    public RedisBrokerConfig {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(nodeId, "nodeId");
        if (streamMax < 1) {
            throw new IllegalArgumentException("streamMax is " + streamMax + " but must be at least 1");
        }
        if (historyTtl.toSeconds() < 1) {
            throw new IllegalArgumentException("historyTtl is " + historyTtl + " but must be at least a second");
        }
        if (leaseTtl.toMillis() < 1 || commandTimeout.toMillis() < 1) {
            throw new IllegalArgumentException("leaseTtl and commandTimeout must be positive");
        }
    }

    /** The defaults, for {@code url} and {@code nodeId}. */
    public static RedisBrokerConfig of(String url, String nodeId) {
        return new RedisBrokerConfig(url, nodeId, DEFAULT_LEASE_TTL, DEFAULT_STREAM_MAX, DEFAULT_HISTORY_TTL,
                DEFAULT_COMMAND_TIMEOUT);
    }

    public RedisBrokerConfig withStreamMax(int max) {
        return new RedisBrokerConfig(url, nodeId, leaseTtl, max, historyTtl, commandTimeout);
    }

    public RedisBrokerConfig withHistoryTtl(Duration ttl) {
        return new RedisBrokerConfig(url, nodeId, leaseTtl, streamMax, ttl, commandTimeout);
    }
}
