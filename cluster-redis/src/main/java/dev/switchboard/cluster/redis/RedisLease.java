package dev.switchboard.cluster.redis;

/**
 * The ownership of a conversation's run by one node, held in Redis until it ends or its TTL passes
 * without renewal. Only the holder of {@code token} may publish with it, renew it or release it.
 *
 * @param conversationId the conversation whose run is owned
 * @param nodeId         the node that acquired it
 * @param token          the proof of ownership, unique to this acquisition
 */
public record RedisLease(String conversationId, String nodeId, String token) {

    /** How a lease stands in the lease index: its token, a newline, its conversation. */
    String indexMember() {
        return token + "\n" + conversationId;
    }

    static RedisLease fromIndexMember(String member) {
        int newline = member.indexOf('\n');
        String token = member.substring(0, newline);
        return new RedisLease(member.substring(newline + 1), token.substring(token.indexOf('@') + 1), token);
    }
}
