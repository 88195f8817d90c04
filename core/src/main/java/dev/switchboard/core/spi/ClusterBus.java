package dev.switchboard.core.spi;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The live path between the nodes of a cluster: what one node emits into a conversation, every
 * node with that conversation's subscribers receives, and a bounded recent history of it is kept
 * for a node that joins or resumes late. A conversation is written by one node at a time, the
 * holder of its write lease: that node gives the seqs (so they stay the conversation's own, plain
 * integers, in every dialect) and the bus refuses what anyone else publishes.
 *
 * <p>The hub encodes what it publishes; the bus keeps and delivers the bytes as given. Every future
 * completes on the bus's own I/O threads: what follows it must not block. Calls made in order by
 * one thread reach the bus in that order (a release after publishes takes effect after them).
 */
public interface ClusterBus {

    /** This node's name, unique in the cluster. */
    String nodeId();

    /** How long a write lease holds without renewal; holders renew it at a third of this. */
    Duration leaseTtl();

    /**
     * Makes this node the writer of the conversation, unless another node is: then empty. The lease
     * says where the conversation's seqs stand ({@link Lease#topSeq()}) and whether its last writer
     * let go cleanly, so that the next seq may follow at once ({@link Lease#clean()}).
     */
    CompletableFuture<Optional<Lease>> acquire(String conversationId);

    /**
     * Raises the conversation's fence to {@code fence} while {@code lease} holds it (see
     * {@link Lease#fence()}): the node that took the conversation over found a higher fence in the
     * store than the bus gave it, the bus having lost its own. False when the lease no longer held.
     */
    CompletableFuture<Boolean> raiseFence(Lease lease, long fence);

    /** Extends the lease by {@link #leaseTtl()}; false when it was lost (it expired, or was claimed). */
    CompletableFuture<Boolean> renew(Lease lease);

    /**
     * Ends the lease after every publish sent before it, and records the conversation's top seq,
     * raised to {@code topSeq} when that is higher, as a clean point to continue from: a writer that
     * started above its predecessor's reservations (and may have published nothing since) passes its
     * own top, so that the next writer goes on from there. False when the lease no longer held.
     */
    CompletableFuture<Boolean> release(Lease lease, long topSeq);

    /** {@link #release(Lease, long)} at the top seq published. */
    default CompletableFuture<Boolean> release(Lease lease) {
        return release(lease, 0);
    }

    /** The node that holds the conversation's lease, if one does. */
    CompletableFuture<Optional<String>> holder(String conversationId);

    /**
     * Takes for this node up to {@code limit} leases that ended without renewal or release (their
     * node died or lost the bus): each is taken by one caller in the cluster only, and answered as
     * {@link #acquire} answers (not clean, as their writer did not let go). A conversation another
     * node acquired since its lease lapsed is not answered.
     */
    CompletableFuture<List<Taken>> takeExpired(int limit);

    /**
     * A lease {@link #takeExpired taken} from a writer that stopped renewing it.
     *
     * @param lapsedNodeId the node whose lease lapsed
     * @param lease        this node's lease now
     */
    record Taken(String lapsedNodeId, Lease lease) {
    }

    /**
     * Appends events to the conversation's history, in order, and delivers each to every node that
     * subscribed, in one step. Refused whole, and nothing kept, unless {@code lease} still holds the
     * conversation and each seq is above every seq published before it.
     */
    CompletableFuture<Published> publish(Lease lease, List<Publication> events);

    /** {@link #publish(Lease, List)} of one event. */
    default CompletableFuture<Published> publish(Lease lease, long seq, byte[] payload) {
        return publish(lease, List.of(new Publication(seq, payload)));
    }

    /** At most {@code limit} entries of the conversation's history after {@code afterSeq}, oldest first. */
    CompletableFuture<History> history(String conversationId, long afterSeq, int limit);

    /**
     * Delivers every entry published to the conversation from now on to {@code listener}, in seq
     * order, on an I/O thread; it must not block. Completes once the subscription holds, so a
     * history read after it misses nothing in between. An entry lost while the bus reconnected shows
     * as a gap: its successor's {@link Entry#prevSeq()} is not the last seq the listener saw.
     */
    CompletableFuture<Void> subscribe(String conversationId, Consumer<Entry> listener);

    /** Stops delivering to {@code listener}. */
    CompletableFuture<Void> unsubscribe(String conversationId, Consumer<Entry> listener);

    /** Delivers every message {@link #send sent} to this node to {@code listener}; call once. */
    CompletableFuture<Void> listen(Consumer<byte[]> listener);

    /** Sends {@code message} to the node named {@code nodeId}; nobody gets it if that node is gone. */
    CompletableFuture<Void> send(String nodeId, byte[] message);

    /** True for the first caller in the cluster to claim {@code key} within {@code ttl}. */
    CompletableFuture<Boolean> claimOnce(String key, Duration ttl);

    /**
     * Counts one more under {@code key} across the cluster in a fixed window of {@code window} that
     * starts with the window's first count; answers the count so far, this one included.
     */
    CompletableFuture<Long> count(String key, Duration window);

    /**
     * Takes, for this node, one of the {@code limit} places {@code key} has across the cluster (a
     * client's open connections, say): false, and nothing taken, when every place is taken. The
     * places of a node that stopped (its presence on the bus lapsed) are free again.
     */
    CompletableFuture<Boolean> takePlace(String key, int limit);

    /** Gives back one place of {@code key} this node took. */
    CompletableFuture<Void> givePlace(String key);

    /** Null when the bus answers within {@code timeout}, else what is wrong; never fails. */
    CompletableFuture<String> problem(Duration timeout);

    /** Closes the bus's connections. */
    CompletableFuture<Void> close();

    /**
     * The write lease of one conversation, held by one node.
     *
     * @param conversationId the conversation written
     * @param nodeId         the node that holds it
     * @param token          the proof of holding, unique to this acquisition
     * @param topSeq         the last seq published to the conversation when it was acquired (0: none,
     *                       or the bus lost it)
     * @param clean          whether the last writer released its lease at {@code topSeq}: the next seq
     *                       may follow it at once. Otherwise a writer may have shown seqs the bus never
     *                       got, and the next seq must come after every seq reserved in the store.
     * @param fence          what the holder writes the durable store under (see
     *                       {@link ConversationStore#raiseFence}): raised by each acquisition that is
     *                       not clean, so that the writer before, which may still be writing, is fenced
     *                       off
     */
    record Lease(String conversationId, String nodeId, String token, long topSeq, boolean clean, long fence) {
        /** This lease under another fence. */
        public Lease withFence(long fence) {
            return new Lease(conversationId, nodeId, token, topSeq, clean, fence);
        }
    }

    /**
     * An event to publish.
     *
     * @param seq     its seq, given by the conversation's writer
     * @param payload the bytes subscribers receive
     */
    record Publication(long seq, byte[] payload) {
    }

    /**
     * One published event.
     *
     * @param seq     its seq
     * @param prevSeq the seq published before it (0: none); a reader that last saw another seq missed some
     * @param payload the bytes published
     */
    record Entry(long seq, long prevSeq, byte[] payload) {
    }

    /**
     * What the bus still holds of a conversation after a cursor.
     *
     * @param topSeq  the last seq published (0: none, or the bus lost its history)
     * @param entries oldest first
     */
    record History(long topSeq, List<Entry> entries) {
        public History {
            entries = List.copyOf(entries);
        }

        /**
         * Whether the entries continue {@code afterSeq} with nothing missing before the first of them
         * (and, with none, whether nothing was published after it).
         */
        public boolean continues(long afterSeq) {
            return entries.isEmpty() ? topSeq <= afterSeq : entries.get(0).prevSeq() == afterSeq;
        }
    }

    /** Whether a publish was kept. */
    enum Published {
        /** Kept and delivered. */
        PUBLISHED,
        /** The lease no longer holds: another node writes the conversation now. */
        LEASE_LOST,
        /** The seq is not above the last one published. */
        STALE
    }
}
