package dev.switchboard.cluster.redis;

import io.lettuce.core.RedisURI;

import java.time.Duration;
import java.util.Objects;

/**
 * How a node reaches Redis, under which name, and how much live history it keeps there.
 *
 * @param url            {@code redis://HOST:PORT[/db]}
 * @param nodeId         this node's name in write leases, node messages and logs: one word
 * @param leaseTtl       how long a write lease holds without renewal
 * @param streamMax      the most events a conversation's stream keeps (its {@code MAXLEN})
 * @param historyTtl     how long a conversation's stream and top seq outlive its last event
 * @param commandTimeout how long connecting or a command may take before it fails
 */
public record RedisClusterConfig(String url, String nodeId, Duration leaseTtl, int streamMax, Duration historyTtl,
                                 Duration commandTimeout) {
    public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(15);
    public static final int DEFAULT_STREAM_MAX = 10_000;
    public static final Duration DEFAULT_HISTORY_TTL = Duration.ofHours(1);
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(5);

    public RedisClusterConfig {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(nodeId, "nodeId");
        if (nodeId.isEmpty() || nodeId.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException("node id '" + nodeId + "' must be one word");
        }
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
    public static RedisClusterConfig of(String url, String nodeId) {
        return new RedisClusterConfig(url, nodeId, DEFAULT_LEASE_TTL, DEFAULT_STREAM_MAX, DEFAULT_HISTORY_TTL,
                DEFAULT_COMMAND_TIMEOUT);
    }

    public RedisClusterConfig withLeaseTtl(Duration ttl) {
        return new RedisClusterConfig(url, nodeId, ttl, streamMax, historyTtl, commandTimeout);
    }

    public RedisClusterConfig withStreamMax(int max) {
        return new RedisClusterConfig(url, nodeId, leaseTtl, max, historyTtl, commandTimeout);
    }

    public RedisClusterConfig withHistoryTtl(Duration ttl) {
        return new RedisClusterConfig(url, nodeId, leaseTtl, streamMax, ttl, commandTimeout);
    }

    /** Redis's host and port, for messages: never the password the URL may hold. */
    public String address() {
        RedisURI uri = RedisURI.create(url);
        return uri.getHost() + ":" + uri.getPort();
    }
}
