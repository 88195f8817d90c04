package dev.switchboard.core.internal;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.Subscriber;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.StoreBatch;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
    /** The seq of the conversation's newest RunStarted, when known (0: read the log). */
    long newestRunStart;
    /** Stored-only approvals of no run decided since this state was loaded (a once-guard). */
    final Set<String> decidedExternally = new HashSet<>(0);
    final List<Subscriber> subscribers = new ArrayList<>(2);
    /** Every event not yet stored, after the newest stored ones (at most TAIL_KEPT of those). */
    final ArrayDeque<Envelope> tail = new ArrayDeque<>();
    /** History messages queued and not yet stored. */
    final List<StoreBatch.MessageRow> unstoredMessages = new ArrayList<>(2);
    /** Undecided approvals by id, in seq order, whether stored yet or not. */
    final Map<String, ApprovalRecord> open = new LinkedHashMap<>();

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
