package dev.switchboard.cluster.redis;

/**
 * The outcome of {@link RedisBroker#publish}: the event's seq, or why it was refused. A refused
 * event was neither stored nor published.
 *
 * @param status what happened
 * @param seq    the seq the event got, when {@link Status#PUBLISHED}; 0 otherwise
 * @param epoch  the conversation's epoch when published or {@link Status#EPOCH_CHANGED}; null otherwise
 */
public record RedisPublished(Status status, long seq, String epoch) {

    /** What became of a publish. */
    public enum Status {
        /** Stored in the stream under {@code seq} and published live. */
        PUBLISHED,
        /** The lease token given no longer holds the conversation's run: another node owns it, or it ended. */
        LEASE_LOST,
        /** The conversation's history in Redis has another epoch than the one given. */
        EPOCH_CHANGED,
        /**
         * Redis holds no history for the conversation (never opened, expired, or lost in a restart):
         * {@link RedisBroker#open} it from the durable store's top seq first.
         */
        NOT_OPEN
    }

    public boolean published() {
        return status == Status.PUBLISHED;
    }
}
