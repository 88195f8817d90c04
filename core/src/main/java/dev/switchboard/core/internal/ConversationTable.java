package dev.switchboard.core.internal;

import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Subscriber;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ConversationRecord;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.StoreBatch;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The hub's live conversations: each one's state, loaded from the store on first use and
 * forgotten when idle, which connections joined which, and the approvals waited for, by id.
 */
public final class ConversationTable {
    private static final long IDLE_EVICT_MS = TimeUnit.MINUTES.toMillis(5);
    /**
     * How long an approval another node requested is shown from memory while the store does not
     * hold it: its node stores it within moments; one that stopped before storing it took the
     * request with it, and no node will ever decide it.
     */
    private static final long HEARD_KEPT_MS = TimeUnit.MINUTES.toMillis(1);
    /** Approvals heard from other nodes and not yet found stored, at most; the oldest go first. */
    private static final int HEARD_MAX = 4096;

    private final ConversationStore store;
    private final LongSupplier clock;
    /** Whether a conversation this node creates keeps its short history in memory (see the constructor). */
    private final boolean keepHistory;
    private final Map<String, ConversationState> conversations = new ConcurrentHashMap<>();
    /**
     * The conversations each subscriber joined: the id itself while it is one (as most connections
     * join one), a concurrent set of ids from the second on. A set of its own for every connection
     * was some 240 bytes more a connection, kept as long as it lives and copied by every young
     * collection while it is young. Changed in {@code compute} calls, so an id and the set that
     * replaces it never race; read without a lock.
     */
    private final Map<Subscriber, Object> memberships = new ConcurrentHashMap<>();
    /** Approvals a run or an outside asker waits for, by approval id. */
    final Map<String, PendingApproval> awaited = new ConcurrentHashMap<>();
    /**
     * Approvals this node decided or cancelled whose new state is not stored yet, by approval id:
     * they have left {@link #awaited}, and the store may not even hold their request, so a second
     * decision in that moment is answered from here ("already decided", not "unknown").
     */
    final Map<String, ApprovalRecord> unstoredDecisions = new ConcurrentHashMap<>();
    /**
     * Approvals other nodes requested, by approval id, oldest first, with when this node heard
     * of each: a node publishes an event before it stores it, so a client here may see a request
     * that the store does not hold yet, and the pending list shows it from here meanwhile
     * ({@link #heardUnstored}). Guarded by itself.
     */
    private final Map<String, Heard> heardElsewhere = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Heard> eldest) {
            return size() > HEARD_MAX;
        }
    };

    private record Heard(ApprovalRecord record, long at) {
    }

    /** The cluster this node is part of; null when it runs alone. Set once, before any load. */
    private ClusterLink cluster;

    public ConversationTable(ConversationStore store, LongSupplier clock) {
        this(store, clock, false);
    }

    /**
     * {@code keepHistory}: the runtime reads a conversation's history at every run's start
     * ({@link dev.switchboard.core.spi.AgentRuntime#readsHistory}), so a conversation this node
     * creates keeps its history in memory while it is short (see ConversationState.history).
     */
    public ConversationTable(ConversationStore store, LongSupplier clock, boolean keepHistory) {
        this.store = store;
        this.clock = clock;
        this.keepHistory = keepHistory;
    }

    /** Keeps every conversation loaded from now on in step with the cluster. */
    public void joinCluster(ClusterLink cluster) {
        this.cluster = cluster;
    }

    /**
     * The conversation's live state, loaded from the store on first use. Empty (and the
     * subscriber told why) when the principal may not use it, or it does not exist and
     * {@code create} is false.
     */
    public Optional<ConversationState> access(String id, Subscriber from, boolean create) {
        ConversationState c = load(id);
        if (cluster != null) {
            cluster.awaitRecord(c);
        }
        synchronized (c) {
            if (c.retired) {
                return access(id, from, create);
            }
            if (!c.persisted && !create) {
                from.reject(GatewayError.field(ErrorCode.NOT_FOUND, "conversation", "no conversation " + id));
                return Optional.empty();
            }
            if (c.persisted && !from.principal().mayUse(c.owner)) {
                from.reject(GatewayError.of(ErrorCode.FORBIDDEN, "conversation " + id + " belongs to another principal"));
                return Optional.empty();
            }
            c.touched = clock.getAsLong();
        }
        return Optional.of(c);
    }

    /**
     * As {@link #access} of a conversation a run may create, when this node runs alone, has it in
     * memory or (made there now) the store surely lacks it ({@link ConversationStore#surelyAbsent}),
     * and the subscriber may use it; else null, having read nothing (the caller takes the usual way,
     * which reads the store or refuses the subscriber).
     */
    ConversationState accessInMemory(String id, Subscriber from) {
        if (cluster != null) {
            return null;
        }
        ConversationState c = conversations.get(id);
        if (c == null) {
            if (!store.surelyAbsent(id)) {
                return null;
            }
            ConversationState fresh = fresh(id, Optional.empty(), 0, List.of());
            ConversationState prior = conversations.putIfAbsent(id, fresh);
            c = prior != null ? prior : fresh;
        }
        synchronized (c) {
            if (c.retired || (c.persisted && !from.principal().mayUse(c.owner))) {
                return null;
            }
            c.touched = clock.getAsLong();
        }
        return c;
    }

    ConversationState load(String id) {
        ConversationState c = conversations.get(id);
        if (c != null) {
            return c;
        }
        // Read outside the map lock; a racing loader's copy loses to the first one put.
        Optional<ConversationRecord> rec = store.conversation(id);
        // In a cluster a reservation is no event: the conversation goes on from its last event.
        long lastSeq = cluster == null ? store.lastSeq(id) : store.lastEventSeq(id);
        List<ApprovalRecord> open = rec.isPresent() ? store.pendingApprovals(id) : List.of();
        ConversationState fresh = fresh(id, rec, lastSeq, open);
        if (cluster != null) {
            if (rec.isPresent() && lastSeq > 0) {
                runStoredUnfinished(fresh, lastSeq);
            }
            cluster.attach(fresh);
        }
        ConversationState prior = conversations.putIfAbsent(id, fresh);
        if (prior != null && cluster != null) {
            cluster.detach(fresh);
        }
        return prior != null ? prior : fresh;
    }

    /** A conversation's state as the store showed it ({@code rec} empty: not stored). */
    private ConversationState fresh(String id, Optional<ConversationRecord> rec, long lastSeq,
                                    List<ApprovalRecord> open) {
        ConversationState fresh = new ConversationState(id, rec.map(ConversationRecord::owner).orElse(null),
                rec.isPresent(), lastSeq, open, clock.getAsLong());
        if (rec.isEmpty() && cluster == null && !store.shared()) {
            // A conversation not stored yet has no history, and only this state will add to it.
            fresh.messageIds = new MessageIdSet();
            if (keepHistory) {
                fresh.history = new ArrayList<>(2);
            }
        }
        return fresh;
    }

    /**
     * In a cluster, a conversation loaded while another node runs a run of it whose start that node
     * has stored: the bus brings this node only what follows the store's last event, so the run's
     * start must come from the store, or this node would take the conversation for idle until the
     * run's end arrives (a client reattaching here would be told there is nothing to resume). Its
     * end, from its node or from the node that fails it when its node stops, clears it as any other.
     */
    private void runStoredUnfinished(ConversationState fresh, long lastSeq) {
        store.lastRunBoundary(fresh.id, lastSeq).ifPresent(boundary -> {
            if (boundary.event().kind() == Event.Kind.RUN_STARTED) {
                fresh.newestRunStart = boundary.seq();
                fresh.remoteRunId = boundary.runId();
            }
        });
    }

    /**
     * Whether this node knows that another node resolved the approval, which the store still shows
     * pending (that node stores it a moment later, or, had it stopped, the node taking over does).
     */
    boolean resolvedElsewhere(ApprovalRecord a) {
        ConversationState c = conversations.get(a.conversationId());
        if (c == null) {
            return false;
        }
        synchronized (c) {
            return c.remoteResolved != null && c.remoteResolved.contains(a.approvalId());
        }
    }

    /** Notes an approval another node requested, which its node stores a moment later. */
    void heardRequested(ApprovalRecord a) {
        synchronized (heardElsewhere) {
            heardElsewhere.put(a.approvalId(), new Heard(a, clock.getAsLong()));
        }
    }

    /** Forgets an approval another node requested once it is resolved. */
    void heardResolved(String approvalId) {
        synchronized (heardElsewhere) {
            heardElsewhere.remove(approvalId);
        }
    }

    /**
     * The approvals other nodes requested that the store does not hold yet, oldest first; reads
     * the store for each, so it is called off the conversations' locks. One the store holds, or
     * that stayed unstored longer than {@value #HEARD_KEPT_MS} ms, is forgotten.
     */
    List<ApprovalRecord> heardUnstored() {
        List<Heard> heard;
        synchronized (heardElsewhere) {
            if (heardElsewhere.isEmpty()) {
                return List.of();
            }
            heard = new ArrayList<>(heardElsewhere.values());
        }
        long now = clock.getAsLong();
        List<ApprovalRecord> unstored = new ArrayList<>();
        for (Heard h : heard) {
            String id = h.record.approvalId();
            if (now - h.at > HEARD_KEPT_MS || store.approval(id).isPresent()) {
                synchronized (heardElsewhere) {
                    heardElsewhere.remove(id, h);
                }
            } else if (!resolvedElsewhere(h.record)) {
                unstored.add(h.record);
            }
        }
        return unstored;
    }

    /** Every conversation in memory. */
    Collection<ConversationState> all() {
        return conversations.values();
    }

    /**
     * Runs on the store writer: forgets conversations nobody uses, after their writes are stored,
     * and gives back the seqs they reserved and did not use; of those it keeps, gives back the
     * room a quiet conversation's tail grew to while a run streamed.
     */
    public void evictIdle() {
        long now = clock.getAsLong();
        conversations.values().removeIf(c -> {
            synchronized (c) {
                if (c.active != null || !c.subscribers.isEmpty() || c.inFlight != 0 || c.pending != 0
                        || c.lease != null || c.reserving != 0 || now - c.touched <= IDLE_EVICT_MS) {
                    shrinkTailLocked(c);
                    return false;
                }
                if (cluster != null) {
                    cluster.detach(c);
                } else if (c.reserved > c.lastSeq) {
                    // Before it leaves the map: whoever loads it next reads the released reservation.
                    store.write(new StoreBatch().reserve(c.id, c.lastSeq));
                }
                c.retired = true;
                return true;
            }
        });
    }

    /**
     * Replaces the empty tail of a conversation with no run going and nothing on its way to the
     * store with a small one, if it grew (see ConversationState.TAIL_KEPT_IDLE): once a run's last
     * events are stored, and at every sweep. In a cluster a tail keeps other nodes' newest events,
     * so it is left as it is. The caller holds the conversation's lock.
     */
    void shrinkTailLocked(ConversationState c) {
        if (cluster == null && c.tailGrew && c.active == null && c.inFlight == 0 && c.tail.isEmpty()) {
            c.tail = new ArrayDeque<>(ConversationState.TAIL_KEPT_IDLE);
            c.tailGrew = false;
        }
    }

    /** Records that the subscriber joins the conversation. */
    void enter(Subscriber s, String conversationId) {
        memberships.compute(s, (k, joined) -> {
            if (joined == null || joined.equals(conversationId)) {
                return conversationId;
            }
            Set<String> ids = idsOf(joined);
            ids.add(conversationId);
            return ids;
        });
    }

    /** The set of ids that {@code joined} ({@link #memberships}' value) is, or becomes from one id. */
    @SuppressWarnings("unchecked")
    private static Set<String> idsOf(Object joined) {
        if (joined instanceof String one) {
            Set<String> ids = ConcurrentHashMap.newKeySet();
            ids.add(one);
            return ids;
        }
        return (Set<String>) joined;
    }

    /** Forgets that the subscriber joined the conversation; its caller removes it from the subscribers. */
    void leave(Subscriber s, String conversationId) {
        memberships.computeIfPresent(s, (k, joined) -> {
            if (joined instanceof String one) {
                return one.equals(conversationId) ? null : one;
            }
            idsOf(joined).remove(conversationId);
            return joined;
        });
    }

    boolean memberOf(Subscriber s, String conversationId) {
        Object joined = memberships.get(s);
        return joined != null && (joined.equals(conversationId)
                || !(joined instanceof String) && idsOf(joined).contains(conversationId));
    }

    /** The subscriber leaves every conversation it joined. */
    public void leaveAll(Subscriber s) {
        Object joined = memberships.remove(s);
        if (joined instanceof String one) {
            dropFrom(conversations.get(one), s);
        } else if (joined != null) {
            for (String id : idsOf(joined)) {
                dropFrom(conversations.get(id), s);
            }
        }
    }

    /** Removes the subscriber from the conversation's subscribers, if it is in memory. */
    private static void dropFrom(ConversationState c, Subscriber s) {
        if (c != null) {
            synchronized (c) {
                c.subscribers.remove(s);
            }
        }
    }
}
