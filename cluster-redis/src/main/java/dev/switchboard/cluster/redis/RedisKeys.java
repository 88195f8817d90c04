package dev.switchboard.cluster.redis;

/**
 * The key layout. A conversation's keys share the hash tag {@code {conversationId}}, so Redis
 * Cluster keeps them in one slot and one script may touch them all; the lease index and the
 * counters are keys of their own.
 */
final class RedisKeys {
    static final String PREFIX = "sb:";
    /** Sorted set of {@link RedisLease#indexMember()}s scored by when each lease ends unless renewed. */
    static final String LEASE_INDEX = PREFIX + "leases";

    private RedisKeys() {
    }

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

    /** The meta hash, the stream and the run lease: the keys of the publish script. */
    static String[] conversation(String conversationId) {
        return new String[] {meta(conversationId), stream(conversationId), lease(conversationId)};
    }

    private static String tagged(String conversationId) {
        if (conversationId.isEmpty()) {
            // "{}" is no hash tag: the keys would land in different slots.
            throw new IllegalArgumentException("conversation id must not be empty");
        }
        return PREFIX + "{" + conversationId;
    }
}
