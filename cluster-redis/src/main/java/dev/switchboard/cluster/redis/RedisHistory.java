package dev.switchboard.cluster.redis;

import java.util.List;

/**
 * What {@link RedisBroker#history} read: the stream's entries after a cursor, the position they
 * belong to, and whether they continue the cursor without a gap. One snapshot: the entries, the
 * epoch and the top seq were read in one step.
 *
 * @param status    whether the entries continue the cursor
 * @param epoch     the conversation's current epoch; null when {@link Status#NOT_OPEN}
 * @param topSeq    the last seq given in that epoch
 * @param oldestSeq the oldest seq the stream still holds, 0 when it holds none
 * @param entries   in seq order, at most the limit asked for; empty unless {@link Status#CONTINUOUS}
 *                  or {@link Status#TRUNCATED}
 */
public record RedisHistory(Status status, String epoch, long topSeq, long oldestSeq, List<RedisEntry> entries) {

    /** Whether, and how, the entries continue the cursor. */
    public enum Status {
        /**
         * The entries start right after the cursor. Fewer than asked means they reach {@code topSeq};
         * as many as asked means more may follow: read again after the last one.
         */
        CONTINUOUS,
        /**
         * The stream no longer holds the seqs right after the cursor (it is bounded): the entries
         * start at {@code oldestSeq}, and the seqs between the cursor and it are in the durable store.
         */
        TRUNCATED,
        /** The cursor's epoch is not the conversation's: the history it was taken from is gone from Redis. */
        EPOCH_CHANGED,
        /** The cursor is past {@code topSeq}: this epoch never gave it. */
        AHEAD,
        /** Redis holds no history for the conversation. */
        NOT_OPEN
    }

    public RedisHistory {
        entries = List.copyOf(entries);
    }
}
