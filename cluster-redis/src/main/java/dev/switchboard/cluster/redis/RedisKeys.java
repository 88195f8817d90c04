package dev.switchboard.cluster.redis;

/**
 * The key layout. A conversation's keys share the hash tag {@code {conversationId}}, so Redis
 * Cluster keeps them in one slot and one script may touch them all; the lease index, the counters,
 * the once-keys and the node channels are keys of their own.
 */
final class RedisKeys {
    static final String PREFIX = "sb:";
    /** Sorted set of {@link #leaseIndexMember}s scored by when each lease ends unless renewed. */
    static final String LEASE_INDEX = PREFIX + "leases";

    private RedisKeys() {
    }

    /** Hash of the conversation's top seq ({@code seq}) and where its last writer let go ({@code released}). */
    static String meta(String conversationId) {
        return tagged(conversationId) + "}:meta";
    }

    static String stream(String conversationId) {
        return tagged(conversationId) + "}:stream";
    }

    static String lease(String conversationId) {
        return tagged(conversationId) + "}:lease";
    }

    static String channel(String conversationId) {
        return tagged(conversationId) + "}:live";
    }

    static String counter(String key) {
        return PREFIX + "count:" + key;
    }

    static String once(String key) {
        return PREFIX + "once:" + key;
    }

    /** Sorted set of the nodes present, scored by when each one's presence lapses unless renewed. */
    static final String NODES = PREFIX + "nodes";

    /** Hash of a key's places, each node's count of them; its own hash tag, so a script may touch it alone. */
    static String places(String key) {
        return PREFIX + "{places:" + key + "}";
    }

    /** The pub/sub channel of the messages sent to one node. */
    static String node(String nodeId) {
        return PREFIX + "node:" + nodeId;
    }

    /** The meta hash, the stream and the write lease: the keys of the publish script. */
    static String[] conversation(String conversationId) {
        return new String[] {meta(conversationId), stream(conversationId), lease(conversationId)};
    }

    /** The write lease and the meta hash: the keys of the lease scripts. */
    static String[] leaseAndMeta(String conversationId) {
        return new String[] {lease(conversationId), meta(conversationId)};
    }

    /** How a lease stands in the lease index: its token, a newline, its conversation. */
    static String leaseIndexMember(String conversationId, String token) {
        return token + "\n" + conversationId;
    }

    private static String tagged(String conversationId) {
        if (conversationId.isEmpty()) {
            // "{}" is no hash tag: the keys would land in different slots.
            throw new IllegalArgumentException("conversation id must not be empty");
        }
        return PREFIX + "{" + conversationId;
    }
}
