package dev.switchboard.core.spi;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.InputMessage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Writes the hub hands the store in one transaction, each list in emission order:
 * new conversations, new messages, new events, approvals to insert or update, and the
 * conversations' seq reservations.
 */
public final class StoreBatch {
    /**
     * The highest {@code seq} of a conversation that may have been shown to a client: the store
     * remembers it (the newest reservation of the conversation wins, lower or higher), and
     * {@link ConversationStore#lastSeq} answers at least it, so a restart after a crash never hands
     * out a seq a client may hold for a lost event again.
     */
    public record Reservation(String conversationId, long upTo) {
    }

    /** A message of a conversation, with the run it belongs to (null for none) and when it was stored. */
    public record MessageRow(String conversationId, String runId, InputMessage message, long createdAt) {
    }

    private final List<ConversationRecord> conversations = new ArrayList<>();
    private final List<MessageRow> messages = new ArrayList<>();
    private final List<Envelope> events = new ArrayList<>();
    /** What the store prepared for each event (see ConversationStore#prepare), null where nothing. */
    private final List<Object> prepared = new ArrayList<>();
    private final List<ApprovalRecord> approvals = new ArrayList<>();
    private final List<Reservation> reservations = new ArrayList<>();
    private final Map<String, Long> fences = new HashMap<>();

    public StoreBatch addConversation(ConversationRecord c) {
        conversations.add(c);
        return this;
    }

    public StoreBatch addMessage(MessageRow m) {
        messages.add(m);
        return this;
    }

    public StoreBatch addEvent(Envelope e) {
        return addEvent(e, null);
    }

    /** Adds an event with what {@link ConversationStore#prepare} made of it. */
    public StoreBatch addEvent(Envelope e, Object prepared) {
        events.add(e);
        this.prepared.add(prepared);
        return this;
    }

    public StoreBatch putApproval(ApprovalRecord a) {
        approvals.add(a);
        return this;
    }

    /**
     * Says that the batch writes the conversation as the holder of fence {@code fence} (see
     * {@link ConversationStore#raiseFence}): a store that keeps fences leaves out every row of the
     * conversation when a higher fence was raised since. One fence per conversation and batch; a
     * second one replaces the first.
     */
    public StoreBatch fence(String conversationId, long fence) {
        fences.put(conversationId, fence);
        return this;
    }

    /** The fence the batch writes each fenced conversation under; unfenced conversations are not in it. */
    public Map<String, Long> fences() {
        return fences;
    }

    /** The fence the batch writes the conversation under, or null when it carries none. */
    public Long fenceOf(String conversationId) {
        return fences.get(conversationId);
    }

    /** Records the conversation's seq reservation (see {@link Reservation}). */
    public StoreBatch reserve(String conversationId, long upTo) {
        reservations.add(new Reservation(conversationId, upTo));
        return this;
    }

    public List<ConversationRecord> conversations() {
        return conversations;
    }

    public List<MessageRow> messages() {
        return messages;
    }

    public List<Envelope> events() {
        return events;
    }

    /** What the store prepared for the {@code i}-th event, or null. */
    public Object prepared(int i) {
        return prepared.get(i);
    }

    public List<ApprovalRecord> approvals() {
        return approvals;
    }

    public List<Reservation> reservations() {
        return reservations;
    }

    /** Whether the batch has rows to write besides its reservations (which a store commits apart). */
    public boolean hasRows() {
        return !conversations.isEmpty() || !messages.isEmpty() || !events.isEmpty() || !approvals.isEmpty();
    }

    /**
     * The one line a store throws for a batch it rolled back: the first event whose seq an earlier
     * event of the batch has in its conversation, or that {@code stored} says is already stored;
     * else the conversations the batch writes to, the store ({@code where}) and the {@code reason}.
     */
    public String rollbackMessage(Predicate<Envelope> stored, String where, String reason) {
        Set<String> seen = new HashSet<>();
        for (Envelope e : events) {
            if (!seen.add(e.seq() + ":" + e.conversationId()) || stored.test(e)) {
                return "event seq " + e.seq() + " of conversation " + e.conversationId()
                        + " is already stored; the batch was rolled back";
            }
        }
        Set<String> ids = new LinkedHashSet<>();
        conversations.forEach(c -> ids.add(c.id()));
        messages.forEach(m -> ids.add(m.conversationId()));
        events.forEach(e -> ids.add(e.conversationId()));
        approvals.forEach(a -> ids.add(a.conversationId()));
        return "cannot write a batch for conversations " + ids + " to " + where + ": " + reason
                + "; the batch was rolled back";
    }

    public boolean isEmpty() {
        return conversations.isEmpty() && messages.isEmpty() && events.isEmpty() && approvals.isEmpty()
                && reservations.isEmpty();
    }

    /** Empties the batch for reuse. */
    public void clear() {
        conversations.clear();
        messages.clear();
        events.clear();
        prepared.clear();
        approvals.clear();
        reservations.clear();
        fences.clear();
    }
}
