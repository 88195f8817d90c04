package dev.switchboard.cluster.redis;

/**
 * An event that a node published, as a subscriber on any node receives it.
 *
 * @param conversationId the conversation it belongs to
 * @param epoch          the epoch of the conversation's history it was stored in
 * @param seq            its seq in that epoch
 * @param payload        the bytes given to {@link RedisBroker#publish}
 */
public record RedisLiveMessage(String conversationId, String epoch, long seq, byte[] payload) {
}
