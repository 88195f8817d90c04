package dev.switchboard.core.internal;

import dev.switchboard.core.Command;
import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.Subscriber;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ConversationStore;
import io.opentelemetry.api.trace.SpanContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * Joins and resumes: a subscriber joins a conversation's fan-out live or from a cursor, reading
 * what is stored below the conversation's tail outside its lock, and the tail, and the join,
 * under it. A cursor lost in a crash is answered with a resync ({@link ConversationHub} says why).
 */
public final class Replay {
    /** Logged under the hub's name, as every part of the hub logs. */
    private static final Logger log = LoggerFactory.getLogger(ConversationHub.class);
    private static final int REPLAY_PAGE = 500;
    /** What {@link #join} did not return: the join waits for a page read from the store first. */
    private static final int NOT_JOINED = Integer.MIN_VALUE;

    private final ConversationStore store;
    private final ConversationTable table;
    /** The cluster this node is part of; null when it runs alone. */
    private final ClusterLink cluster;
    private final HubMetrics metrics;
    private final HubTraces traces;

    public Replay(ConversationStore store, ConversationTable table, ClusterLink cluster, HubMetrics metrics,
                  HubTraces traces) {
        this.store = store;
        this.table = table;
        this.cluster = cluster;
        this.metrics = metrics;
        this.traces = traces;
    }

    /**
     * Events below the tail: from the store, or in a cluster from its history first (another node's
     * events reach the store from that node, a moment later).
     */
    private List<Envelope> logged(ConversationState c, long afterSeq, int limit) {
        return cluster == null ? store.events(c.id, afterSeq, limit) : cluster.events(c.id, afterSeq, limit);
    }

    /** The seq of the RunStarted of the run going on in the conversation, here or on another node; 0: none. */
    private static long activeStart(ConversationState c) {
        if (c.active != null) {
            return c.active.startSeq;
        }
        return c.remoteRunId != null ? c.newestRunStart : 0;
    }

    /**
     * Joins a subscriber to a conversation's fan-out. With a cursor it first gets every event
     * after it. Without one it gets the active run from its start (so a display that joins mid-run
     * is whole) and, if it can answer them, the approvals still pending that the run's replay did
     * not show. A cursor that names no event of the conversation (it was lost in a crash, or never
     * was) gets everything from the start of the last run stored before it (from the first event
     * when there is none): everything the client holds before that start is stored as it saw it, so
     * it drops what it holds from there on and takes what follows.
     *
     * <p>What is stored is read outside the conversation's lock, page by page, until what is left
     * is in the tail; the rest, and the join, happen under the lock, so nothing emitted meanwhile
     * is missed or seen twice.
     */
    public void subscribe(ConversationState c, Subscriber s, long afterSeq, boolean catchUp) {
        if (cluster != null && afterSeq > 0) {
            // A cursor another node gave may be ahead of what this node has applied yet.
            cluster.reach(c, afterSeq);
        } else if (cluster != null && afterSeq == Command.Subscribe.LAST_RUN) {
            // The run to reattach to may have started on another node a moment ago.
            cluster.awaitLastRun(c);
        }
        table.enter(s, c.id);
        long from;
        long lastSeq;
        boolean idle;
        synchronized (c) {
            if (c.subscribers.contains(s)) {
                return;
            }
            from = afterSeq;
            lastSeq = c.lastSeq;
            long activeStart = activeStart(c);
            idle = c.active == null && c.remoteRunId == null;
            if (afterSeq < 0 && (catchUp || afterSeq == Command.Subscribe.LAST_RUN)) {
                from = activeStart == 0 ? -1 : activeStart - 1;
            }
        }
        if (from < 0 && afterSeq == Command.Subscribe.LAST_RUN) {
            from = lastRunStart(c, lastSeq) - 1;
            if (from < 0 && idle) {
                // No run to reattach to, active or past: nothing to resume.
                s.caughtUp();
            }
        }
        long cursorGiven = afterSeq;
        // For metrics, a resume from a cursor: where its events came from, and how many.
        String outcome = "memory";
        int replayed = 0;
        if (afterSeq > 0) {
            if (exists(c, afterSeq)) {
                prime(c, s, afterSeq);
            } else {
                from = Math.max(0, lastRunStart(c, Math.min(afterSeq, lastSeq)) - 1);
                log.info("cursor {} of conversation {} names no event (lost in a crash, or never sent);"
                        + " resending from seq {}", afterSeq, c.id, from + 1);
                cursorGiven = from;
                outcome = "resync";
            }
        }
        long cursor = from;
        boolean sent = false;
        while (true) {
            long tailFirst;
            int joined;
            SpanContext running;
            synchronized (c) {
                if (c.subscribers.contains(s)) {
                    return;
                }
                tailFirst = c.tail.isEmpty() ? c.lastSeq + 1 : c.tail.peekFirst().seq();
                joined = from < 0 || cursor + 1 >= tailFirst ? join(c, s, from, cursor, cursorGiven, catchUp, sent)
                        : NOT_JOINED;
                running = c.active == null ? null : c.active.span.getSpanContext();
            }
            if (joined != NOT_JOINED) {
                // Recorded outside the conversation's lock.
                if (afterSeq > 0 && joined >= 0) {
                    metrics.resumed(outcome, replayed + joined);
                    traces.resumed(s, c, running, outcome, replayed + joined);
                }
                return;
            }
            // Everything before the tail is stored.
            boolean below = false;
            for (Envelope e : logged(c, cursor, REPLAY_PAGE)) {
                if (e.seq() >= tailFirst) {
                    // The tail has it, or (in a cluster) will once this node applies it: it comes from there.
                    break;
                }
                if (!Emitter.took(s, e)) {
                    Emitter.tellOverflowed(s, e);
                    return;
                }
                cursor = e.seq();
                sent = true;
                below = true;
                replayed++;
                if (!outcome.equals("resync")) {
                    outcome = "store";
                }
            }
            if (!below) {
                // Nothing stored after the cursor below the tail: a gap a crash left.
                cursor = Math.max(cursor, tailFirst - 1);
            }
        }
    }

    /**
     * The end of a join, under the conversation's lock: the tail after {@code cursor} (unless the
     * join is live, {@code from < 0}), the pending approvals a catch-up shows, and membership. The
     * events of the tail it sent; -1 when the subscriber overflowed.
     */
    private int join(ConversationState c, Subscriber s, long from, long cursor, long cursorGiven, boolean catchUp,
                     boolean sent) {
        int delivered = 0;
        if (from >= 0) {
            for (Envelope e : c.tail) {
                if (e.seq() > cursor) {
                    if (!Emitter.took(s, e)) {
                        Emitter.tellOverflowed(s, e);
                        return -1;
                    }
                    cursor = e.seq();
                    sent = true;
                    delivered++;
                }
            }
        }
        if (cursorGiven >= 0 && !sent && c.active == null && c.remoteRunId == null) {
            // Nothing after the cursor, and nothing to come.
            s.caughtUp();
        }
        if (cursorGiven < 0 && catchUp && s.answersApprovals()) {
            for (ApprovalRecord a : c.open.values()) {
                if (a.seq() > from && a.seq() <= cursor) {
                    continue;
                }
                for (Envelope e : read(c, a.seq() - 1, 1)) {
                    if (e.seq() == a.seq() && !Emitter.took(s, e)) {
                        Emitter.tellOverflowed(s, e);
                        return -1;
                    }
                }
            }
        }
        c.subscribers.add(s);
        return delivered;
    }

    /**
     * Events of the conversation after {@code afterSeq}, at most {@code limit}, in order: from the
     * store below the tail, from the tail above it.
     */
    private List<Envelope> read(ConversationState c, long afterSeq, int limit) {
        long tailFirst;
        List<Envelope> tail = new ArrayList<>();
        synchronized (c) {
            tailFirst = c.tail.isEmpty() ? c.lastSeq + 1 : c.tail.peekFirst().seq();
            for (Envelope e : c.tail) {
                if (e.seq() > afterSeq) {
                    if (tail.size() == limit) {
                        break;
                    }
                    tail.add(e);
                }
            }
        }
        if (afterSeq + 1 >= tailFirst) {
            return tail;
        }
        List<Envelope> out = new ArrayList<>(limit);
        for (Envelope e : logged(c, afterSeq, limit)) {
            if (e.seq() < tailFirst) {
                out.add(e);
            }
        }
        for (int i = 0; i < tail.size() && out.size() < limit; i++) {
            out.add(tail.get(i));
        }
        return out;
    }

    /** Whether the conversation has the event {@code seq}. */
    private boolean exists(ConversationState c, long seq) {
        List<Envelope> at = read(c, seq - 1, 1);
        return !at.isEmpty() && at.get(0).seq() == seq;
    }

    /**
     * A client resuming from a cursor inside a run was shown that run up to the cursor: hands
     * those events to the subscriber to prime its dialect's state, so what follows continues the
     * run as the client saw it (no second start of a message, chunk numbers that go on).
     */
    private void prime(ConversationState c, Subscriber s, long cursor) {
        List<Envelope> at = read(c, cursor - 1, 1);
        if (at.isEmpty() || at.get(0).runId() == null || at.get(0).event().kind() == Event.Kind.RUN_FINISHED
                || at.get(0).event().kind() == Event.Kind.RUN_FAILED) {
            return;
        }
        long after = lastRunStart(c, cursor) - 1;
        if (after < 0) {
            return;
        }
        while (after < cursor) {
            List<Envelope> page = new ArrayList<>(read(c, after, (int) Math.min(REPLAY_PAGE, cursor - after)));
            page.removeIf(e -> e.seq() > cursor);
            if (page.isEmpty()) {
                return;
            }
            s.prime(page);
            after = page.get(page.size() - 1).seq();
        }
    }

    /** The seq of the conversation's last RunStarted at or before {@code lastSeq}, or 0 for none. */
    long lastRunStart(ConversationState c, long lastSeq) {
        synchronized (c) {
            if (c.newestRunStart > 0 && c.newestRunStart <= lastSeq) {
                return c.newestRunStart;
            }
        }
        for (long to = lastSeq; to > 0; to -= REPLAY_PAGE) {
            long after = Math.max(0, to - REPLAY_PAGE);
            // Read the whole window: the store answers only up to the tail, the tail the rest.
            List<Envelope> window = new ArrayList<>();
            while (after < to) {
                List<Envelope> page = read(c, after, REPLAY_PAGE);
                if (page.isEmpty()) {
                    break;
                }
                for (Envelope e : page) {
                    if (e.seq() <= to) {
                        window.add(e);
                    }
                }
                after = page.get(page.size() - 1).seq();
            }
            for (int i = window.size() - 1; i >= 0; i--) {
                if (window.get(i).event().kind() == Event.Kind.RUN_STARTED) {
                    return window.get(i).seq();
                }
            }
        }
        return 0;
    }
}
