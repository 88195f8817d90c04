package dev.switchboard.core.spi;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.InputMessage;

import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Durable history: conversations, their messages, the event log and approvals.
 *
 * <p>The hub writes batches in emission order from one thread, and small batches of seq
 * reservations from the thread that emits; reads may come from any thread and must see every
 * committed batch. Implementations for several gateway instances share one database.
 */
public interface ConversationStore extends AutoCloseable {

    /** The conversation, if it exists. */
    Optional<ConversationRecord> conversation(String conversationId);

    /**
     * The highest {@code seq} of the conversation that is stored or reserved (see
     * {@link StoreBatch.Reservation}), or 0: the next event of the conversation gets a higher one.
     */
    long lastSeq(String conversationId);

    /** The highest {@code seq} of the conversation's stored events, reservations aside, or 0. */
    long lastEventSeq(String conversationId);

    /**
     * True only when the store surely holds neither the conversation nor a seq reservation of it
     * (see {@link StoreBatch.Reservation}), as of every write that returned before this call; false
     * when it may hold either, or cannot tell. Answered from memory, without waiting on the store's
     * files or connections: the hub asks it on the thread that read a run's request, to start a new
     * conversation's run there (a filter of the ids stored, say). A {@link #shared} store, which
     * other processes write, answers false. False by default.
     */
    default boolean surelyAbsent(String conversationId) {
        return false;
    }

    /**
     * Whether several gateways may share this store at once (a database server, not a file one
     * process locks); a cluster needs such a store. False by default.
     */
    default boolean shared() {
        return false;
    }

    /**
     * Writes a batch in one transaction: all of it or none. A store that keeps fences (see
     * {@link #raiseFence}) leaves out the rows of each conversation the batch writes under a fence
     * lower than the conversation's ({@link StoreBatch#fences()}), and says so in its log.
     */
    void write(StoreBatch batch);

    /**
     * Fences off every writer of the conversation but the caller, in a cluster where a node takes a
     * conversation over from one that may still be writing (cut off, paused): makes the
     * conversation's fence {@code atLeast}, or one above the fence it had when that is higher, and
     * answers it. From then on the store leaves out what a batch writes to the conversation under a
     * lower fence; a batch that was already writing it is committed before this returns, so that a
     * read after it sees everything the fenced-off writer stored.
     *
     * <p>A store that one gateway alone writes needs no fences: the default keeps none and answers
     * {@code atLeast}.
     */
    default long raiseFence(String conversationId, long atLeast) {
        return atLeast;
    }

    /**
     * What a writer taking a conversation over from one that did not let go needs before it shows
     * anything: {@link #raiseFence}, then {@link #lastSeq} read behind the fence, then a reservation
     * of the {@code reserve} seqs after that last seq (see {@link StoreBatch.Reservation}). A store
     * that can should do it in one transaction: the take-over, and the failure of the run the last
     * writer left, wait for each round trip. The default makes the three calls.
     */
    default RaisedFence raiseFenceAndReserve(String conversationId, long atLeast, long reserve) {
        long fence = raiseFence(conversationId, atLeast);
        long lastSeq = lastSeq(conversationId);
        write(new StoreBatch().reserve(conversationId, lastSeq + reserve));
        return new RaisedFence(fence, lastSeq);
    }

    /**
     * What {@link #raiseFenceAndReserve} answers.
     *
     * @param fence   the conversation's fence now
     * @param lastSeq the highest seq stored or reserved before the new reservation, which starts after it
     */
    record RaisedFence(long fence, long lastSeq) {
    }

    /**
     * Work on an event that need not wait for the writer, such as encoding it: the hub calls this
     * on the thread that emits the event, before queuing it, and the result comes back with the
     * event in the batch ({@link StoreBatch#prepared(int)}), so the one thread that writes does
     * less per event. Null (the default) when there is nothing to prepare. A {@code String} is the
     * event's JSON as {@link dev.switchboard.core.EventCodec#toJson} writes it: in a cluster the hub
     * sends it to the other nodes as it is, and encodes the event itself when it is anything else.
     */
    default Object prepare(Envelope event) {
        return null;
    }

    /** Stored events with {@code seq > afterSeq}, in order, at most {@code limit}. */
    List<Envelope> events(String conversationId, long afterSeq, int limit);

    /**
     * The conversation's last stored event at or below {@code upToSeq} that starts or ends a run
     * ({@code RunStarted}, {@code RunFinished}, {@code RunFailed}), if any: whether a run was left
     * unfinished, asked when a node takes a conversation over. A store should answer it from an
     * index; the default reads the events from the start.
     */
    default Optional<Envelope> lastRunBoundary(String conversationId, long upToSeq) {
        Envelope last = null;
        long after = 0;
        while (after < upToSeq) {
            List<Envelope> page = events(conversationId, after, 500);
            for (Envelope e : page) {
                if (e.seq() <= upToSeq && e.event().boundsRun()) {
                    last = e;
                }
            }
            if (page.size() < 500) {
                break;
            }
            after = page.get(page.size() - 1).seq();
        }
        return Optional.ofNullable(last);
    }

    /** The conversation's messages, oldest first. */
    List<InputMessage> messages(String conversationId);

    /**
     * Which of {@code ids} name messages the conversation holds: what a run's start asks of every
     * message a client sends (AG-UI clients send the whole history each time), so a store should
     * answer it from an index rather than by reading the history. The default reads the history.
     */
    default Set<String> knownMessageIds(String conversationId, Collection<String> ids) {
        Set<String> known = new HashSet<>();
        for (InputMessage m : messages(conversationId)) {
            if (ids.contains(m.id())) {
                known.add(m.id());
            }
        }
        return known;
    }

    /** One approval, decided or not. */
    Optional<ApprovalRecord> approval(String approvalId);

    /** The conversation's undecided approvals, oldest first. */
    List<ApprovalRecord> pendingApprovals(String conversationId);

    /**
     * Runs that started and never ended (no {@code RunFinished} or {@code RunFailed} stored): the
     * gateway stopped under them. Each is the {@code RunStarted} envelope.
     */
    List<Envelope> unfinishedRuns();

    /** Undecided approvals of every conversation, oldest first, a page of them. */
    List<ApprovalRecord> pendingApprovals(int limit, int offset);

    /** How many approvals are undecided, in every conversation. */
    int countPendingApprovals();

    /**
     * Stores a JSON document in a collection (for example the A2H side's calls and humans):
     * inserted, or replaced when {@code replace}; false when it exists and is not replaced.
     */
    boolean putDocument(String collection, String id, String json, boolean replace);

    /** A stored document. */
    Optional<String> document(String collection, String id);

    /** Every document of a collection, oldest first. */
    List<String> documents(String collection);

    /**
     * What keeps the store from serving right now, in one line (a database that cannot be reached,
     * say), or null when it serves; for {@code /healthz}. It may take a moment (a round trip to a
     * database, at most a few seconds), so the host calls it off the event loops. Null by default,
     * for a store in the gateway's own process.
     */
    default String problem() {
        return null;
    }

    @Override
    void close();
}
