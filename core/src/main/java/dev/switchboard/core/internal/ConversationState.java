package dev.switchboard.core.internal;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Subscriber;
import dev.switchboard.core.spi.ClusterBus;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.StoreBatch;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

/** Live state of one conversation in the hub; fields guarded by its monitor. */
public final class ConversationState {
    final String id;
    String owner;
    boolean persisted;
    long lastSeq;
    long touched;
    Run active;
    int inFlight;
    int pending;
    /** Evicted from the map: a holder must load the conversation again. */
    boolean retired;
    /** The highest seq whose reservation is stored: events up to it may be shown before they are. */
    long reserved;
    /**
     * The seqs a worker is reserving for the conversation (see Emitter.reserveBehind), up to this
     * one; 0 when no reservation is on its way. Events past {@link #reserved} wait in {@link #unreserved}
     * meanwhile.
     */
    long reserving;
    /**
     * What waits for the reservation on its way, in order: events past {@link #reserved} and the
     * writes for the store queued after the first of them. Null when nothing waits.
     */
    ArrayList<Object> unreserved;
    /** The highest seq this node emitted and stored. */
    long storedSeq;
    /** The seq of the conversation's newest RunStarted, when known (0: read the log). */
    long newestRunStart;
    /**
     * Stored-only approvals of no run decided since this state was loaded (a once-guard); null
     * until the first. This and the other collections most conversations never use (those of a
     * cluster below) are made when first needed: a conversation's state outlives many young
     * collections, each of which copies it while it ages (bench/NOTES.md).
     */
    Set<String> decidedExternally;
    final List<Subscriber> subscribers = new ArrayList<>(2);
    /**
     * The most events the tail of a conversation nobody streams to keeps room for: an
     * {@code ArrayDeque}'s array never shrinks, so a tail grown while a run streamed is replaced
     * by a small one once it is empty and the conversation quiet ({@link ConversationTable#shrinkTailLocked}):
     * when the store has a run's last events, rather than at the next sweep a minute later. Kept
     * until then, the grown array of every conversation that ran lately outlived the young
     * collections in between, each of which copied it.
     */
    static final int TAIL_KEPT_IDLE = 16;
    /** Every event not yet stored (and, of other nodes' events, the newest: Emitter.REMOTE_TAIL_KEPT). */
    ArrayDeque<Envelope> tail = new ArrayDeque<>(TAIL_KEPT_IDLE);
    /** More than {@link #TAIL_KEPT_IDLE} events were in {@link #tail} at once since it was last replaced. */
    boolean tailGrew;
    /**
     * Writes for the store the store writer has not taken yet: {@link Emitter.Queued}s, and as
     * themselves the {@link Envelope}s of events that bring nothing else (see Emitter.queueLocked).
     */
    ArrayList<Object> toStore = new ArrayList<>(0);
    /**
     * How many writes the store writer took from {@link #toStore} last time (at most
     * {@code Emitter.TO_STORE_HINT_MAX}): the next list is made that large at its first write,
     * rather than grown step by step while a run's events arrive, and holds no array while empty.
     */
    int toStoreLast;
    /** History messages queued and not yet stored. */
    final List<StoreBatch.MessageRow> unstoredMessages = new ArrayList<>(2);
    /**
     * Every history message id of the conversation while this node knows them all (it created the
     * conversation, runs alone, and the history is short): a run's start then asks memory, not the
     * store, which of the client's messages are new. Null once that is not so (see Emitter.knownMessageIds).
     */
    MessageIdSet messageIds;
    /**
     * Every history message id of the conversation, as a filter that tells the new ones surely,
     * once {@link #messageIds} grew too long for memory (null before that, and after the filter is
     * full, or when this node does not know every id); see Emitter.knownMessageIds.
     */
    IdFilter messageIdFilter;
    /**
     * The conversation's whole history, oldest first, while memory holds it: its runtime reads the
     * history at every run's start, this node created the conversation and runs alone (as for
     * {@link #messageIds}), and the history is short (Emitter.HISTORY_KEPT_MESSAGES and
     * HISTORY_KEPT_CHARS). A run's start then reads it here rather than from the store, and may
     * do so on an event loop. Null otherwise, for good once it grew too long.
     */
    ArrayList<InputMessage> history;
    /** The characters of {@link #history}'s contents and tool call arguments. */
    int historyChars;
    /** Undecided approvals by id, in seq order, whether stored yet or not. */
    final Map<String, ApprovalRecord> open = new LinkedHashMap<>();

    // In a cluster (see ClusterLink):
    /** Taken while acquiring the write lease, so that one thread of this node acquires it. */
    final Object leaseLock = new Object();
    /**
     * The write lease this node holds, or null. Written holding the conversation's lock; volatile,
     * as are {@link #leaseSureUntil} and {@link #releaseWhenSettled}, for the timer that renews
     * leases, which must not wait for a conversation's lock.
     */
    volatile ClusterBus.Lease lease;
    /**
     * Until when ({@link System#nanoTime}) the bus holds {@link #lease} for sure: a lease time after
     * the request that acquired or last renewed it was sent.
     */
    volatile long leaseSureUntil;
    /** How many users of this node (a run, an approval asked or decided outside one) hold the lease. */
    int leaseHolds;
    /** The run another node is running here, as its events showed; null for none. */
    String remoteRunId;
    /** This node's listener on the conversation's channel. */
    Consumer<ClusterBus.Entry> live;
    /** Reading the bus's history: what arrives meanwhile waits in {@link #held}. */
    boolean catchingUp;
    /** Null while nothing waits (see ClusterLink.applyHeld). */
    TreeMap<Long, ClusterBus.Entry> held;
    /** How many times the conversation was read again for an event still missing before {@link #held}. */
    int gapReads;
    /** A publish of this conversation's events is on its way: what is emitted meanwhile waits in {@link #outgoing}. */
    boolean publishing;
    /** Events emitted while a publish was on its way, sent together when it is answered; null for none. */
    List<ClusterBus.Publication> outgoing;
    /**
     * A lease to let go once {@link #outgoing} is published and nothing is {@link #inFlight} to the
     * store: its release must follow its events, and says they are all durable.
     */
    volatile ClusterBus.Lease releaseWhenSettled;
    /**
     * A lease acquired and not yet {@link #lease}: renewed while the node reads what the last writer
     * left (which may take longer than a lease time on a loaded machine), so that it does not lapse
     * before its first use.
     */
    volatile ClusterBus.Lease acquiring;
    /** History messages other nodes' runs added lately, which the store may not hold yet; null for none yet. */
    ArrayDeque<InputMessage> remoteMessages;
    /** Approvals other nodes resolved lately, whose new state the store may not hold yet; null for none yet. */
    ArrayDeque<String> remoteResolved;

    ConversationState(String id, String owner, boolean persisted, long lastSeq, List<ApprovalRecord> open,
                      long touched) {
        this.id = id;
        this.owner = owner;
        this.persisted = persisted;
        this.lastSeq = lastSeq;
        this.reserved = lastSeq;
        this.touched = touched;
        open.forEach(a -> this.open.put(a.approvalId(), a));
    }
}
