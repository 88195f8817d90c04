package dev.switchboard.core;

import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ConversationRecord;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.StoreBatch;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** A store that keeps everything in memory, for tests and for gateways that need no history. */
public final class InMemoryConversationStore implements ConversationStore {
    private final Map<String, ConversationRecord> conversations = new HashMap<>();
    private final Map<String, List<InputMessage>> messages = new HashMap<>();
    private final Map<String, List<Envelope>> events = new HashMap<>();
    private final Map<String, ApprovalRecord> approvals = new LinkedHashMap<>();
    private final Map<String, Map<String, String>> documents = new HashMap<>();
    private final Map<String, Long> reservations = new HashMap<>();

    @Override
    public synchronized Optional<ConversationRecord> conversation(String conversationId) {
        return Optional.ofNullable(conversations.get(conversationId));
    }

    @Override
    public synchronized long lastSeq(String conversationId) {
        return Math.max(lastEventSeq(conversationId), reservations.getOrDefault(conversationId, 0L));
    }

    @Override
    public synchronized long lastEventSeq(String conversationId) {
        List<Envelope> log = events.get(conversationId);
        return log == null || log.isEmpty() ? 0 : log.get(log.size() - 1).seq();
    }

    /** From its maps: it holds everything in memory. */
    @Override
    public synchronized boolean surelyAbsent(String conversationId) {
        return !conversations.containsKey(conversationId) && !reservations.containsKey(conversationId)
                && !events.containsKey(conversationId);
    }

    @Override
    public synchronized void write(StoreBatch batch) {
        for (ConversationRecord c : batch.conversations()) {
            conversations.putIfAbsent(c.id(), c);
        }
        for (StoreBatch.MessageRow m : batch.messages()) {
            messages.computeIfAbsent(m.conversationId(), k -> new ArrayList<>()).add(m.message());
        }
        for (Envelope e : batch.events()) {
            events.computeIfAbsent(e.conversationId(), k -> new ArrayList<>()).add(e);
        }
        for (ApprovalRecord a : batch.approvals()) {
            approvals.put(a.approvalId(), a);
        }
        for (StoreBatch.Reservation r : batch.reservations()) {
            reservations.put(r.conversationId(), r.upTo());
        }
    }

    @Override
    public synchronized List<Envelope> events(String conversationId, long afterSeq, int limit) {
        List<Envelope> out = new ArrayList<>();
        for (Envelope e : events.getOrDefault(conversationId, List.of())) {
            if (e.seq() > afterSeq && out.size() < limit) {
                out.add(e);
            }
        }
        return out;
    }

    @Override
    public synchronized List<InputMessage> messages(String conversationId) {
        return List.copyOf(messages.getOrDefault(conversationId, List.of()));
    }

    @Override
    public synchronized Optional<ApprovalRecord> approval(String approvalId) {
        return Optional.ofNullable(approvals.get(approvalId));
    }

    @Override
    public synchronized List<ApprovalRecord> pendingApprovals(String conversationId) {
        return approvals.values().stream()
                .filter(a -> a.conversationId().equals(conversationId) && a.status() == ApprovalRecord.Status.PENDING)
                .toList();
    }

    @Override
    public synchronized List<ApprovalRecord> pendingApprovals(int limit, int offset) {
        return approvals.values().stream().filter(a -> a.status() == ApprovalRecord.Status.PENDING)
                .sorted(java.util.Comparator.comparingLong(ApprovalRecord::seq))
                .skip(offset).limit(limit).toList();
    }

    @Override
    public synchronized List<Envelope> unfinishedRuns() {
        List<Envelope> out = new ArrayList<>();
        for (List<Envelope> log : events.values()) {
            for (Envelope e : log) {
                if (e.event().kind() == Event.Kind.RUN_STARTED && log.stream().noneMatch(t -> t.event().terminal()
                        && java.util.Objects.equals(t.runId(), e.runId()))) {
                    out.add(e);
                }
            }
        }
        return out;
    }

    @Override
    public synchronized int countPendingApprovals() {
        return (int) approvals.values().stream().filter(a -> a.status() == ApprovalRecord.Status.PENDING).count();
    }

    @Override
    public synchronized boolean putDocument(String collection, String id, String json, boolean replace) {
        Map<String, String> docs = documents.computeIfAbsent(collection, k -> new LinkedHashMap<>());
        if (!replace && docs.containsKey(id)) {
            return false;
        }
        docs.put(id, json);
        return true;
    }

    @Override
    public synchronized Optional<String> document(String collection, String id) {
        return Optional.ofNullable(documents.getOrDefault(collection, Map.of()).get(id));
    }

    @Override
    public synchronized List<String> documents(String collection) {
        return List.copyOf(documents.getOrDefault(collection, Map.of()).values());
    }

    @Override
    public void close() {
    }
}
