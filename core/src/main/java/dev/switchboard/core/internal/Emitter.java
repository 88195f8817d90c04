package dev.switchboard.core.internal;

import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.DeliveryBurst;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.EventCodec;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.LogContext;
import dev.switchboard.core.Plural;
import dev.switchboard.core.Role;
import dev.switchboard.core.Subscriber;
import dev.switchboard.core.ToolCallRef;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ClusterBus;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.StoreBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * How an event leaves the hub, under its conversation's lock: its {@code seq} (seqs are reserved
 * in the store ahead of use, see {@link StoreBatch.Reservation}), the conversation's tail, every
 * subscriber's queue, and the {@link StoreWriter}'s queue with the history messages and approval
 * states that go with it. {@link ConversationHub} describes the rules these keep.
 */
public final class Emitter {
    /** Logged under the hub's name, as every part of the hub logs. */
    private static final Logger log = LoggerFactory.getLogger(ConversationHub.class);
    /**
     * Events of other nodes a conversation's tail keeps (those this node emitted leave it once
     * stored): what a node that takes the conversation over may still need of a run another node
     * did not store.
     *
     * <p>This node's own events are not kept once stored. Every event a tail keeps outlives the
     * young garbage collections while it is kept, and the collector copies it at each: at 1,000
     * busy conversations, 256 stored events kept per conversation made the young pauses 59 ms
     * (median), 32 made them 23 ms; paced at 75k events/s, keeping none made them 16 ms against
     * 31 ms with 32. A resume that missed stored events reads them from the store, where its
     * cursor's own event is looked up in any case.
     */
    private static final int REMOTE_TAIL_KEPT = 32;
    /** The most writes a conversation's next list for the store is made room for at once (see ConversationState.toStoreLast). */
    static final int TO_STORE_HINT_MAX = 1024;
    /** How many seqs one reservation covers: a store write before every this many events of a conversation. */
    static final long RESERVATION = 1 << 16;
    /** The first pause before a reservation a worker stores is tried again (see {@link #reserveBehind}). */
    static final long RESERVE_RETRY_FIRST_MS = 50;
    /** The longest pause between tries of a reservation a worker stores (see {@link #reserveBehind}). */
    static final long RESERVE_RETRY_MAX_MS = 5_000;
    /** History messages of other nodes' runs a conversation keeps until the store surely has them. */
    private static final int REMOTE_MESSAGES_KEPT = 200;
    /** A conversation's history message ids kept in memory at most (see ConversationState.messageIds). */
    private static final int MESSAGE_IDS_KEPT = 512;
    /**
     * The most history messages a conversation keeps in memory for its runs' starts (see
     * ConversationState.history): some thirty turns of a chat.
     */
    static final int HISTORY_KEPT_MESSAGES = 64;
    /**
     * The most characters of content (and tool call arguments) a conversation's history kept in
     * memory holds: 1,000 conversations active within the minutes before they are forgotten hold at
     * most some 16 MB for it.
     */
    static final int HISTORY_KEPT_CHARS = 16 * 1024;
    /** Approvals other nodes resolved that a conversation remembers, for the pending list (see ConversationState). */
    private static final int REMOTE_RESOLVED_KEPT = 256;

    private final ConversationStore store;
    private final StoreWriter writer;
    private final Executor workers;
    private final LongSupplier clock;
    private final ConversationTable table;
    /** The cluster this node is part of; null when it runs alone. */
    private final ClusterLink cluster;
    /** Conversations whose next reservation waits for a worker to store it (see reserveBehind). */
    private final ArrayDeque<ConversationState> toReserve = new ArrayDeque<>();
    /** Whether a worker is storing reservations (reserveQueued); guarded by {@link #toReserve}. */
    private boolean storingReservations;

    public Emitter(ConversationStore store, StoreWriter writer, Executor workers, LongSupplier clock,
                   ConversationTable table, ClusterLink cluster) {
        this.store = store;
        this.writer = writer;
        this.workers = workers;
        this.clock = clock;
        this.table = table;
        this.cluster = cluster;
    }

    /**
     * Queues a write for the conversation; the caller holds its lock. {@code committed} (may be
     * null) runs under the lock once the write is stored. In a cluster, what this node writes as the
     * conversation's writer goes under its lease's fence (see {@link ConversationStore#raiseFence}).
     */
    void writeLocked(ConversationState c, Consumer<StoreBatch> fill, Runnable committed) {
        queueLocked(c, new Queued(fenceOf(c), null, null, null, null, fill, committed));
    }

    /**
     * A write waiting in its conversation's list for the store writer ({@link StoreWriter.Source}):
     * an event with the history message and approval state it brings ({@code env} set), or any
     * other write ({@code fill}, and {@code committed} to run once it is stored).
     */
    record Queued(long fence, Envelope env, Object prepared, StoreBatch.MessageRow row, ApprovalRecord approval,
                  Consumer<StoreBatch> fill, Runnable committed) {
    }

    private static long fenceOf(ConversationState c) {
        ClusterBus.Lease lease = c.lease;
        return lease == null ? StoreWriter.UNFENCED : lease.fence();
    }

    /**
     * Adds a write to the conversation's list, queuing the list when it was empty; the caller holds
     * its lock. An event that brings nothing else to store (no history message, approval, fence or
     * prepared form: most deltas) is queued as its envelope alone, which saves an object an event.
     */
    private void queueLocked(ConversationState c, Object w) {
        if (c.unreserved != null) {
            // Behind events that wait for their seqs' reservation (see reserveBehind): in their order.
            c.unreserved.add(w);
            return;
        }
        enqueueLocked(c, w);
    }

    /** {@link #queueLocked}, behind nothing held. */
    private void enqueueLocked(ConversationState c, Object w) {
        c.inFlight++;
        writer.added();
        if (c.toStore.isEmpty()) {
            c.toStore.ensureCapacity(c.toStoreLast);
            writer.write(sink -> drain(c, sink));
        }
        c.toStore.add(w);
    }

    /** On the store writer's thread: hands the conversation's queued writes to the batch. */
    private int drain(ConversationState c, StoreWriter.Sink sink) {
        List<Object> taken;
        synchronized (c) {
            taken = c.toStore;
            if (taken.isEmpty()) {
                return 0;
            }
            c.toStore = new ArrayList<>();
            c.toStoreLast = Math.min(taken.size(), TO_STORE_HINT_MAX);
        }
        for (Object o : taken) {
            if (o instanceof Envelope env) {
                sink.batch(c.id, StoreWriter.UNFENCED).addEvent(env, null);
                continue;
            }
            Queued w = (Queued) o;
            StoreBatch b = sink.batch(c.id, w.fence);
            if (w.env != null) {
                b.addEvent(w.env, w.prepared);
                if (w.row != null) {
                    b.addMessage(w.row);
                }
                if (w.approval != null) {
                    b.putApproval(w.approval);
                }
            } else {
                w.fill.accept(b);
            }
        }
        sink.afterCommit(() -> committed(c, taken));
        return taken.size();
    }

    /** The conversation's writes {@code done} are stored: under its lock, in the order they were queued. */
    private void committed(ConversationState c, List<Object> done) {
        synchronized (c) {
            for (Object o : done) {
                c.inFlight--;
                if (o instanceof Envelope env) {
                    stored(c, env.seq());
                    continue;
                }
                Queued w = (Queued) o;
                if (w.env != null) {
                    if (w.row != null) {
                        c.unstoredMessages.remove(w.row);
                    }
                    stored(c, w.env.seq());
                } else if (w.committed != null) {
                    try {
                        w.committed.run();
                    } catch (RuntimeException e) {
                        log.error("a follow-up of a store write of conversation {} failed", c.id, e);
                    }
                }
            }
            if (c.inFlight == 0) {
                if (cluster != null) {
                    cluster.settledLocked(c);
                } else {
                    table.shrinkTailLocked(c);
                }
            }
        }
    }

    /** Queues a history message; until it is stored, {@link #messagesOf} reads it from memory. */
    void writeMessageLocked(ConversationState c, StoreBatch.MessageRow row) {
        c.unstoredMessages.add(row);
        rememberLocked(c, row.message());
        writeLocked(c, b -> b.addMessage(row), () -> c.unstoredMessages.remove(row));
    }

    /**
     * Queues an approval's new state and keeps the conversation's pending approvals in step; a
     * decision is in {@link ConversationTable#unstoredDecisions} until it is stored.
     */
    void writeApprovalLocked(ConversationState c, ApprovalRecord a) {
        if (a.status() == ApprovalRecord.Status.PENDING) {
            c.open.put(a.approvalId(), a);
            writeLocked(c, b -> b.putApproval(a), null);
            return;
        }
        c.open.remove(a.approvalId());
        table.unstoredDecisions.put(a.approvalId(), a);
        writeLocked(c, b -> b.putApproval(a), () -> table.unstoredDecisions.remove(a.approvalId(), a));
    }

    /**
     * The conversation's history messages, oldest first: the stored ones, then those on their way;
     * from memory alone when it holds them all ({@link #messagesInMemory}).
     */
    List<InputMessage> messagesOf(ConversationState c) {
        List<InputMessage> kept = messagesInMemory(c);
        if (kept != null) {
            return kept;
        }
        List<StoreBatch.MessageRow> unstored;
        List<InputMessage> remote;
        synchronized (c) {
            unstored = List.copyOf(c.unstoredMessages);
            remote = c.remoteMessages == null ? List.of() : List.copyOf(c.remoteMessages);
        }
        // Read after the copy: a message stored in between is in both, and counted once.
        List<InputMessage> all = new ArrayList<>(store.messages(c.id));
        Set<String> ids = new HashSet<>();
        all.forEach(m -> ids.add(m.id()));
        for (InputMessage m : remote) {
            if (ids.add(m.id())) {
                all.add(m);
            }
        }
        for (StoreBatch.MessageRow row : unstored) {
            if (ids.add(row.message().id())) {
                all.add(row.message());
            }
        }
        return all;
    }

    /**
     * The conversation's history messages, oldest first, when memory holds them all (see
     * ConversationState.history); null when only the store can tell. Never waits on the store.
     */
    List<InputMessage> messagesInMemory(ConversationState c) {
        synchronized (c) {
            return c.history == null ? null : new ArrayList<>(c.history);
        }
    }

    /**
     * Adds a history message to what memory keeps of the conversation's history, if it keeps it,
     * and its id to the ids it keeps; the caller holds its lock.
     */
    private static void rememberLocked(ConversationState c, InputMessage m) {
        List<InputMessage> history = c.history;
        if (history != null) {
            int chars = c.historyChars + m.content().length();
            for (ToolCallRef call : m.toolCalls()) {
                chars += call.arguments().length();
            }
            if (history.size() < HISTORY_KEPT_MESSAGES && chars <= HISTORY_KEPT_CHARS) {
                history.add(m);
                c.historyChars = chars;
            } else {
                // A long conversation: the store's read costs little beside what its model reads.
                c.history = null;
            }
        }
        String messageId = m.id();
        MessageIdSet kept = c.messageIds;
        if (kept != null) {
            if (kept.add(messageId) && kept.size() > MESSAGE_IDS_KEPT) {
                // A long history: its ids cost more memory than the store's index costs a run's start,
                // but a filter of them still tells a new id from those that may be known.
                c.messageIdFilter = IdFilter.of(kept);
                c.messageIds = null;
            }
        } else if (c.messageIdFilter != null && !c.messageIdFilter.add(messageId)) {
            c.messageIdFilter = null;
        }
    }

    /**
     * Which of {@code ids} the conversation's history holds, as far as memory tells it surely: null
     * when the store would have to be asked (see {@link #knownMessageIds}).
     */
    Set<String> knownMessageIdsInMemory(ConversationState c, Set<String> ids) {
        Set<String> known = new HashSet<>();
        return knownInMemory(c, ids, known).isEmpty() ? known : null;
    }

    /**
     * Which of {@code ids} name messages of the conversation's history: from memory when the
     * conversation keeps every id of it, else those on their way from memory and the others from
     * the store's index (never the whole history: a run's start asks this), but for those its
     * filter of every id, if it has one, says are new.
     */
    Set<String> knownMessageIds(ConversationState c, Set<String> ids) {
        Set<String> known = new HashSet<>();
        List<String> rest = knownInMemory(c, ids, known);
        // Asked after the copy: a message stored in between leaves memory only once it is stored.
        if (!rest.isEmpty()) {
            known.addAll(store.knownMessageIds(c.id, rest));
        }
        return known;
    }

    /**
     * Adds to {@code known} those of {@code ids} memory knows the history holds; answers those
     * only the store can tell about (none when memory holds every id of the history, or its filter
     * tells the rest are new).
     */
    private static List<String> knownInMemory(ConversationState c, Set<String> ids, Set<String> known) {
        synchronized (c) {
            if (c.messageIds != null) {
                for (String id : ids) {
                    if (c.messageIds.contains(id)) {
                        known.add(id);
                    }
                }
                return List.of();
            }
            for (StoreBatch.MessageRow row : c.unstoredMessages) {
                if (ids.contains(row.message().id())) {
                    known.add(row.message().id());
                }
            }
            if (c.remoteMessages != null) {
                for (InputMessage m : c.remoteMessages) {
                    if (ids.contains(m.id())) {
                        known.add(m.id());
                    }
                }
            }
            // The filter holds an id from when its message is made, before it is stored.
            IdFilter filter = c.messageIdFilter;
            return ids.stream()
                    .filter(id -> !known.contains(id) && (filter == null || filter.mightContain(id)))
                    .toList();
        }
    }

    /**
     * Stamps and emits an event of the run; the caller holds the conversation's lock.
     * {@code after} (may be null) runs on a worker once every subscriber has it.
     */
    void emitLocked(Run run, Event event, Runnable after) {
        emitLocked(run.conversation, run, event, after);
    }

    /**
     * Stamps and emits an event of the conversation, of {@code run} or of no run (null);
     * the caller holds the conversation's lock. {@code after} (may be null) runs on a worker
     * once every subscriber has it.
     */
    void emitLocked(ConversationState c, Run run, Event event, Runnable after) {
        emitLocked(c, run, run == null ? null : run.request.runId(), event, after);
    }

    /**
     * The one way an event leaves the hub: it gets the conversation's next seq (reserving more
     * first when the reservation is used up), joins the tail, goes to every subscriber's queue and
     * is queued for the store.
     */
    void emitLocked(ConversationState c, Run run, String runId, Event event, Runnable after) {
        long seq = c.lastSeq + 1;
        if (seq > c.reserved) {
            if (c.reserving != 0) {
                // A worker is storing the reservation (reserveBehind): the event waits for it below,
                // and for one more, after it, when it passes even that one.
                if (seq > c.reserving) {
                    c.reserving = seq + RESERVATION - 1;
                }
            } else {
                // Stored before any client may see the seq: a restart after a crash starts above it.
                long upTo = seq + RESERVATION - 1;
                store.write(new StoreBatch().reserve(c.id, upTo));
                c.reserved = upTo;
            }
        }
        c.lastSeq = seq;
        Envelope env = new Envelope(c.id, runId, seq, clock.getAsLong(), event);
        Object stored = store.prepare(env);
        // In a cluster the event's JSON travels to the other nodes too: encoded once, for both.
        Object prepared = cluster != null && !(stored instanceof String) ? EventCodec.toJson(event) : stored;
        StoreBatch.MessageRow row = messageOf(env);
        if (row != null) {
            c.unstoredMessages.add(row);
            rememberLocked(c, row.message());
            if (run != null) {
                run.ownMessages.add(row.message().id());
            }
        }
        ApprovalRecord approval = null;
        if (event instanceof Event.ApprovalRequested a) {
            approval = new ApprovalRecord(c.id, runId, seq, a, ApprovalRecord.Status.PENDING, null, null, null);
            c.open.put(a.approvalId(), approval);
        }
        if (event.kind() == Event.Kind.RUN_STARTED) {
            c.newestRunStart = seq;
        }
        long fence = fenceOf(c);
        Object write = row == null && approval == null && prepared == null && fence == StoreWriter.UNFENCED ? env
                : new Queued(fence, env, prepared, row, approval, null, null);
        Runnable then = after == null ? null : LogContext.wrap(c.id, runId, after);
        if (seq > c.reserved) {
            // Its reservation is on its way: nobody sees it, and the store gets it, once that is stored.
            if (c.unreserved == null) {
                c.unreserved = new ArrayList<>();
            }
            c.unreserved.add(new Held(env, write, then));
            return;
        }
        publishLocked(c, env, prepared, write, then);
    }

    /**
     * An event that waits for its seq's reservation (see {@link #reserveBehind}), with its write for
     * the store and what runs once every subscriber has it.
     */
    private record Held(Envelope env, Object write, Runnable after) {
    }

    /**
     * Shows an event stamped and reserved: the conversation's tail, every subscriber, the cluster, the
     * store writer's queue; then {@code after}, if any, on a worker. The caller holds the lock.
     */
    private void publishLocked(ConversationState c, Envelope env, Object prepared, Object write, Runnable after) {
        c.tail.addLast(env);
        if (c.tail.size() > ConversationState.TAIL_KEPT_IDLE) {
            // Its array grew, and keeps that size until it is replaced (see ConversationTable.evictIdle).
            c.tailGrew = true;
        }
        fanOutLocked(c, env);
        if (cluster != null) {
            cluster.publishLocked(c, env, (String) prepared);
        }
        enqueueLocked(c, write);
        if (after != null) {
            workers.execute(after);
        }
    }

    /**
     * Has a worker store the conversation's next reservation, which the caller marked on its way
     * ({@link ConversationState#reserving}) under the conversation's lock: a run then starts on the
     * thread that read its request, which must not wait for a store write, and its events wait in
     * {@link ConversationState#unreserved} (stamped, unseen, unqueued for the store) until the reservation is
     * stored, then reach everyone in order, in one burst. A failed write is tried again, at growing
     * intervals up to {@value #RESERVE_RETRY_MAX_MS} ms, while the hub runs: until it is stored the
     * events stay unseen, as a client must never see a seq that a crash could give again.
     *
     * <p>One worker at a time stores reservations, every one asked for meanwhile in one write (see
     * {@link #reserveQueued}): many new conversations at once (a thousand clients that connect
     * together) make a few transactions rather than one each, handed from worker to worker through
     * the store's lock.
     */
    void reserveBehind(ConversationState c) {
        synchronized (toReserve) {
            toReserve.add(c);
            if (storingReservations) {
                return;
            }
            storingReservations = true;
        }
        workers.execute(this::reserveQueued);
    }

    /**
     * On a worker: stores the reservations of every conversation in {@link #toReserve}, all in one
     * write, then shows what waited for them; again while more were asked for meanwhile, or a
     * conversation's events passed the reservation stored (emitLocked moved its mark), or the write
     * failed (those it was for are tried again with those asked for since).
     */
    private void reserveQueued() {
        long pauseMs = RESERVE_RETRY_FIRST_MS;
        List<ConversationState> batch = new ArrayList<>();
        while (true) {
            synchronized (toReserve) {
                batch.addAll(toReserve);
                toReserve.clear();
                if (batch.isEmpty()) {
                    storingReservations = false;
                    return;
                }
            }
            long[] upTo = new long[batch.size()];
            StoreBatch write = new StoreBatch();
            for (int i = 0; i < batch.size(); i++) {
                ConversationState c = batch.get(i);
                synchronized (c) {
                    upTo[i] = c.reserving;
                }
                write.reserve(c.id, upTo[i]);
            }
            try {
                store.write(write);
            } catch (RuntimeException e) {
                if (workers instanceof java.util.concurrent.ExecutorService pool && pool.isShutdown()) {
                    // The hub has stopped (see awaitReservations): nothing would store the events now.
                    log.error("could not store the seq reservations of {}; the hub has stopped", named(batch), e);
                    return;
                }
                log.error("could not store the seq reservations of {}; their new events wait for them,"
                        + " trying again in {} ms", named(batch), pauseMs, e);
                try {
                    Thread.sleep(pauseMs);
                } catch (InterruptedException stopping) {
                    Thread.currentThread().interrupt();
                    return;
                }
                pauseMs = Math.min(RESERVE_RETRY_MAX_MS, pauseMs * 2);
                continue;
            }
            pauseMs = RESERVE_RETRY_FIRST_MS;
            int again = 0;
            for (int i = 0; i < batch.size(); i++) {
                ConversationState c = batch.get(i);
                // A burst a conversation: its subscribers are woken as soon as its events are out.
                try (DeliveryBurst burst = DeliveryBurst.open()) {
                    synchronized (c) {
                        c.reserved = Math.max(c.reserved, upTo[i]);
                        try {
                            releaseHeldLocked(c);
                        } catch (RuntimeException e) {
                            // Not the others' to pay for: their events wait for this task too.
                            log.error("could not show all the events of conversation {} that waited for its seq"
                                    + " reservation", c.id, e);
                        }
                        if (c.reserving == upTo[i]) {
                            c.reserving = 0;
                        } else {
                            // Events past it came meanwhile: reserve for them too, in the next write.
                            batch.set(again++, c);
                        }
                    }
                }
            }
            batch.subList(again, batch.size()).clear();
        }
    }

    /** The conversations for a log line: their ids, the first few of many. */
    private static String named(List<ConversationState> batch) {
        StringBuilder ids = new StringBuilder();
        for (int i = 0; i < Math.min(batch.size(), 5); i++) {
            ids.append(i == 0 ? "" : ", ").append(batch.get(i).id);
        }
        return batch.size() == 1 ? "conversation " + ids
                : Plural.of(batch.size(), "conversation") + " (" + ids + (batch.size() > 5 ? ", …)" : ")");
    }

    /**
     * Shows and queues, in order, what waited for a reservation now stored: every event up to
     * {@link ConversationState#reserved} and the writes queued among them; the rest waits on, with
     * every write queued after the first of it. The caller holds the lock.
     */
    private void releaseHeldLocked(ConversationState c) {
        ArrayList<Object> held = c.unreserved;
        if (held == null) {
            return;
        }
        int i = 0;
        try {
            while (i < held.size()) {
                Object o = held.get(i);
                if (o instanceof Held h) {
                    if (h.env.seq() > c.reserved) {
                        break;
                    }
                    // Counted out before it is shown: one that fails on its way is never shown twice.
                    i++;
                    // Nothing is held in a cluster, so there is no prepared form to publish to it.
                    publishLocked(c, h.env, null, h.write, h.after);
                } else {
                    i++;
                    enqueueLocked(c, o);
                }
            }
        } finally {
            if (i == held.size()) {
                c.unreserved = null;
            } else {
                held.subList(0, i).clear();
            }
        }
    }

    /**
     * Takes an event another node of the cluster emitted, in seq order; the caller holds the
     * conversation's lock. It keeps what this node must know of the conversation (its seq, its
     * runs, its pending approvals, its history messages), joins the tail and goes to every
     * subscriber here. Its node stores it.
     */
    void acceptLocked(ConversationState c, Envelope env) {
        c.lastSeq = env.seq();
        Event e = env.event();
        switch (e.kind()) {
            case RUN_STARTED -> {
                c.newestRunStart = env.seq();
                c.remoteRunId = env.runId();
            }
            case RUN_FINISHED, RUN_FAILED -> {
                if (Objects.equals(c.remoteRunId, env.runId())) {
                    c.remoteRunId = null;
                }
            }
            case APPROVAL_REQUESTED -> {
                Event.ApprovalRequested a = (Event.ApprovalRequested) e;
                ApprovalRecord requested = new ApprovalRecord(c.id, env.runId(), env.seq(), a,
                        ApprovalRecord.Status.PENDING, null, null, null);
                c.open.put(a.approvalId(), requested);
                table.heardRequested(requested);
            }
            case APPROVAL_RESOLVED -> {
                String approvalId = ((Event.ApprovalResolved) e).approvalId();
                c.open.remove(approvalId);
                table.heardResolved(approvalId);
                if (c.remoteResolved == null) {
                    c.remoteResolved = new ArrayDeque<>();
                }
                c.remoteResolved.addLast(approvalId);
                if (c.remoteResolved.size() > REMOTE_RESOLVED_KEPT) {
                    c.remoteResolved.pollFirst();
                }
            }
            default -> {
            }
        }
        StoreBatch.MessageRow row = messageOf(env);
        if (row != null) {
            if (c.remoteMessages == null) {
                c.remoteMessages = new ArrayDeque<>();
            }
            c.remoteMessages.addLast(row.message());
            if (c.remoteMessages.size() > REMOTE_MESSAGES_KEPT) {
                c.remoteMessages.pollFirst();
            }
        }
        c.tail.addLast(env);
        while (c.tail.size() > REMOTE_TAIL_KEPT && c.tail.peekFirst().seq() < env.seq()) {
            // Whatever leaves the tail is in the cluster's history, or in the store.
            if (!stillUnstoredHere(c, c.tail.peekFirst())) {
                c.tail.pollFirst();
            } else {
                break;
            }
        }
        fanOutLocked(c, env);
    }

    /**
     * Adds to {@code batch} what storing an event another node emitted takes: the event, the history
     * message it adds, the approval state it changes ({@code approvals} holds those of the batch so
     * far, by id, and the store the older ones).
     */
    void adoptInto(StoreBatch batch, Envelope env, Map<String, ApprovalRecord> approvals) {
        batch.addEvent(env, store.prepare(env));
        StoreBatch.MessageRow row = messageOf(env);
        if (row != null) {
            batch.addMessage(row);
        }
        if (env.event() instanceof Event.ApprovalRequested a) {
            ApprovalRecord asked = new ApprovalRecord(env.conversationId(), env.runId(), env.seq(), a,
                    ApprovalRecord.Status.PENDING, null, null, null);
            approvals.put(a.approvalId(), asked);
            batch.putApproval(asked);
        } else if (env.event() instanceof Event.ApprovalResolved r) {
            ApprovalRecord asked = approvals.containsKey(r.approvalId()) ? approvals.get(r.approvalId())
                    : store.approval(r.approvalId()).orElse(null);
            if (asked != null && asked.status() == ApprovalRecord.Status.PENDING) {
                ApprovalRecord decided = asked.decided(r.approved(), r.feedback(), r.decidedBy(), env.timestamp());
                approvals.put(r.approvalId(), decided);
                batch.putApproval(decided);
            }
        }
    }

    /** Whether an event in the tail is one this node emitted and has not stored yet. */
    private static boolean stillUnstoredHere(ConversationState c, Envelope oldest) {
        return c.inFlight > 0 && oldest.seq() > c.storedSeq;
    }

    /** Event {@code seq} and all before it are stored: they leave the tail. */
    private static void stored(ConversationState c, long seq) {
        c.storedSeq = Math.max(c.storedSeq, seq);
        ArrayDeque<Envelope> tail = c.tail;
        while (!tail.isEmpty() && tail.peekFirst().seq() <= seq) {
            tail.pollFirst();
        }
    }
    /** The history message an event adds, if any. */
    private static StoreBatch.MessageRow messageOf(Envelope env) {
        Event e = env.event();
        InputMessage m;
        switch (e.kind()) {
            case MESSAGE_COMPLETED -> {
                Event.MessageCompleted mc = (Event.MessageCompleted) e;
                m = InputMessage.text(mc.messageId(), Role.ASSISTANT, mc.text());
            }
            case TOOL_CALL_COMPLETED -> {
                Event.ToolCallCompleted tc = (Event.ToolCallCompleted) e;
                // Keyed by the tool call id: AG-UI clients name the message of a parentless call so,
                // and send it back with the history of the next run.
                m = new InputMessage(tc.toolCallId(), Role.ASSISTANT, "",
                        List.of(new ToolCallRef(tc.toolCallId(), tc.toolName(), tc.arguments().toString())), null, null);
            }
            case TOOL_RESULT -> {
                Event.ToolResult tr = (Event.ToolResult) e;
                m = new InputMessage(tr.messageId(), Role.TOOL, tr.content(), List.of(), tr.toolCallId(), tr.toolName());
            }
            default -> {
                return null;
            }
        }
        return new StoreBatch.MessageRow(env.conversationId(), env.runId(), m, env.timestamp());
    }

    /** Hands the event to every subscriber of the conversation; the caller holds its lock. */
    private void fanOutLocked(ConversationState c, Envelope env) {
        List<Subscriber> subs = c.subscribers;
        for (int i = 0; i < subs.size(); i++) {
            Subscriber s = subs.get(i);
            if (!took(s, env)) {
                subs.remove(i--);
                table.leave(s, c.id);
                tellOverflowed(s, env);
            }
        }
    }

    /**
     * Delivers an event to a subscriber, live or replayed: whether it took it. One that throws did
     * not, and is dropped as one that fell behind: a live event still reaches the others and the
     * store, and the thread that delivers it (a runtime's, or the worker that shows events once their
     * reservation is stored, for many conversations) goes on.
     */
    static boolean took(Subscriber s, Envelope env) {
        try {
            return s.deliver(env);
        } catch (RuntimeException e) {
            log.error("a {} subscriber failed to take seq {} of conversation {}; it is dropped as one that fell behind",
                    s.dialect(), env.seq(), env.conversationId(), e);
            return false;
        }
    }

    /** Tells a dropped subscriber so ({@link Subscriber#overflowed}); one that throws is logged. */
    static void tellOverflowed(Subscriber s, Envelope env) {
        try {
            s.overflowed();
        } catch (RuntimeException e) {
            log.error("a {} subscriber dropped from conversation {} failed to close", s.dialect(), env.conversationId(), e);
        }
    }


    /**
     * Whether the store writer, or the cluster's bus, holds over half the writes past which
     * {@link #awaitRoom} waits (see {@link dev.switchboard.core.spi.RunContext#backedUp}).
     */
    boolean backedUp() {
        return !writer.hasRoom() || cluster != null && cluster.backedUp();
    }

    /** Whether {@link #awaitRoom} would surely not wait now, with room to spare (alone, not in a cluster). */
    boolean hasRoom() {
        return cluster == null && writer.hasRoom();
    }

    /**
     * Waits while the store writer is too far behind; call it holding no conversation's lock
     * (see {@link StoreWriter#awaitRoom}).
     */
    void awaitRoom() {
        writer.awaitRoom();
        if (cluster != null) {
            cluster.awaitRoom();
        }
    }

    /** Runs {@code action} once every write queued so far is stored. */
    void runAfterQueuedWrites(Runnable action) {
        writer.run(action);
    }

    /** Completes with {@code value} once every write queued so far is stored. */
    <T> CompletableFuture<T> afterQueuedWrites(T value) {
        CompletableFuture<T> stored = new CompletableFuture<>();
        writer.run(() -> stored.complete(value));
        return stored;
    }

    /**
     * Waits, up to {@code timeout}, until no conversation has a reservation on its way (see
     * {@link #reserveBehind}): what waited for one is then queued for the store, which a clean stop
     * stores. False, and logged, when some are still on their way (their store failed all along).
     */
    public boolean awaitReservations(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            int onTheirWay = 0;
            for (ConversationState c : table.all()) {
                synchronized (c) {
                    if (c.reserving != 0) {
                        onTheirWay++;
                    }
                }
            }
            if (onTheirWay == 0) {
                return true;
            }
            if (System.nanoTime() >= deadline) {
                log.warn("stopping with the seq reservations of {} still unstored: their runs' last events are"
                        + " neither shown nor stored", Plural.of(onTheirWay, "conversation"));
                return false;
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

    /**
     * After a clean stop every event is stored: gives back the seqs each conversation reserved and
     * did not use, so the next start goes on without a gap.
     */
    public void releaseReservations() {
        if (cluster != null) {
            // In a cluster reservations never go down: another node may be writing above this one's.
            return;
        }
        StoreBatch released = new StoreBatch();
        for (ConversationState c : table.all()) {
            synchronized (c) {
                if (c.reserved > c.lastSeq) {
                    released.reserve(c.id, c.lastSeq);
                    c.reserved = c.lastSeq;
                }
            }
        }
        try {
            store.write(released);
        } catch (RuntimeException e) {
            log.warn("could not give back {} of reserved seqs; their next events skip them",
                    Plural.of(released.reservations().size(), "conversation"), e);
        }
    }
}
