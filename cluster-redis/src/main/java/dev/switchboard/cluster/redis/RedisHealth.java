package dev.switchboard.cluster.redis;

/**
 * The answer of {@link RedisBroker#health}.
 *
 * @param up            whether Redis answered {@code PING} in time
 * @param latencyMicros how long the answer took; when down, how long was waited
 * @param problem       why it is down, null when up
 */
public record RedisHealth(boolean up, long latencyMicros, String problem) {
}
