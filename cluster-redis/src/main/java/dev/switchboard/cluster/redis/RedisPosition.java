package dev.switchboard.cluster.redis;

/**
 * Where a conversation's live history stands: the epoch its seqs belong to and the last seq given.
 *
 * @param epoch  names this run of the conversation's history in Redis; a new one means the seqs
 *               before it were lost there, so a cursor of another epoch cannot be continued from Redis
 * @param topSeq the last seq given, 0 for none
 */
public record RedisPosition(String epoch, long topSeq) {
}
