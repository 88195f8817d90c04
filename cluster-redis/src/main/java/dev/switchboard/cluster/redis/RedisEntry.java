package dev.switchboard.cluster.redis;

/**
 * One event as the broker holds it: its seq in the conversation and the bytes it was published with.
 *
 * @param seq     the event's per-conversation seq
 * @param payload the bytes given to {@link RedisBroker#publish} (compared by identity in {@code equals})
 */
public record RedisEntry(long seq, byte[] payload) {
}
