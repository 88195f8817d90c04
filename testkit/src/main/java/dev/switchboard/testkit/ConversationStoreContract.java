package dev.switchboard.testkit;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Citation;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.EventCodec;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Json;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.Role;
import dev.switchboard.core.ToolCallRef;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ConversationRecord;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.StoreBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What every {@link ConversationStore} must do, as a test a store module's own test class extends:
 * round trips of every record, the order and bounds of reads, seq reservations, all-or-nothing
 * batches, durability across a reopen, and reads on other threads that see only whole batches.
 * <pre>
 * class MyStoreTest extends ConversationStoreContract {
 *     &#64;Override protected ConversationStore openFresh() { ... empty storage ... }
 *     &#64;Override protected ConversationStore reopen() { ... the same storage again ... }
 * }
 * </pre>
 */
public abstract class ConversationStoreContract {
    protected static final String CONV = "conv-1";
    protected static final long T0 = 1_700_000_000_000L;

    /** The store under test, opened before each test and closed after it. */
    protected ConversationStore store;

    /** A store over new, empty storage, for one test. */
    protected abstract ConversationStore openFresh() throws Exception;

    /** The storage of the last {@link #openFresh()} opened again, as a restart finds it (the store was closed). */
    protected abstract ConversationStore reopen() throws Exception;

    /**
     * The kinds of event whose {@link ConversationStore#prepare} the store leaves null; every other
     * kind it prepares as its JSON. None unless a store says otherwise.
     */
    protected Set<Event.Kind> kindsNotPrepared() {
        return EnumSet.noneOf(Event.Kind.class);
    }

    /**
     * Whether the store tells new conversations ({@link ConversationStore#surelyAbsent} true for
     * most ids it never held); false unless a store says otherwise.
     */
    protected boolean tellsNewConversations() {
        return false;
    }

    @BeforeEach
    void openStore() throws Exception {
        store = openFresh();
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    @Test
    void conversationRoundTripsAndTheFirstOwnerStands() {
        store.write(new StoreBatch().addConversation(new ConversationRecord(CONV, "alice", T0)));
        store.write(new StoreBatch().addConversation(new ConversationRecord(CONV, "mallory", T0 + 5)));
        store.write(new StoreBatch().addConversation(new ConversationRecord("anonymous", null, T0 + 7)));

        assertThat(store.conversation(CONV)).contains(new ConversationRecord(CONV, "alice", T0));
        assertThat(store.conversation("anonymous")).contains(new ConversationRecord("anonymous", null, T0 + 7));
    }

    @Test
    void unknownConversationHasNothingStoredAndLastSeqZero() {
        assertThat(store.conversation("nope")).isEmpty();
        assertThat(store.lastSeq("nope")).isZero();
        assertThat(store.events("nope", 0, 100)).isEmpty();
        assertThat(store.messages("nope")).isEmpty();
        assertThat(store.pendingApprovals("nope")).isEmpty();
        assertThat(store.approval("nope")).isEmpty();
    }

    @Test
    void everyEventKindReadsBackEqualToWhatWasWritten() {
        List<Envelope> written = new ArrayList<>();
        List<Event> events = oneEventOfEachKind();
        for (int i = 0; i < events.size(); i++) {
            written.add(new Envelope(CONV, i % 2 == 0 ? "run-1" : null, i + 1, T0 + i, events.get(i)));
        }
        StoreBatch batch = conversation(CONV);
        written.forEach(batch::addEvent);
        store.write(batch);

        assertThat(written.stream().map(e -> e.event().kind()).collect(Collectors.toSet()))
                .isEqualTo(EnumSet.allOf(Event.Kind.class));
        assertThat(store.events(CONV, 0, 100)).isEqualTo(written);
    }

    @Test
    void eventsPreparedOnTheEmittingThreadReadBackEqualToWhatWasWritten() {
        List<Envelope> written = new ArrayList<>();
        List<Event> events = oneEventOfEachKind();
        StoreBatch batch = conversation(CONV);
        for (int i = 0; i < events.size(); i++) {
            Envelope e = new Envelope(CONV, "run-1", i + 1, T0 + i, events.get(i));
            written.add(e);
            Object prepared = store.prepare(e);
            if (kindsNotPrepared().contains(e.event().kind())) {
                assertThat(prepared).as("%s, which the store does not prepare", e.event().kind()).isNull();
            } else {
                // The hub sends a prepared String to a cluster's other nodes as the event's JSON.
                assertThat(prepared).as("%s", e.event().kind()).isEqualTo(EventCodec.toJson(e.event()));
            }
            batch.addEvent(e, prepared);
        }
        store.write(batch);

        assertThat(store.events(CONV, 0, 100)).isEqualTo(written);
    }

    @Test
    void eventsAfterASeqComeInOrderAndAtMostLimit() {
        StoreBatch batch = conversation(CONV).addConversation(new ConversationRecord("other", null, T0));
        for (long seq = 10; seq >= 1; seq--) {
            batch.addEvent(delta(CONV, seq));
        }
        batch.addEvent(delta("other", 1));
        store.write(batch);

        assertThat(seqs(store.events(CONV, 0, 100))).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
        assertThat(seqs(store.events(CONV, 4, 3))).containsExactly(5L, 6L, 7L);
        assertThat(seqs(store.events(CONV, 8, 100))).containsExactly(9L, 10L);
        assertThat(store.events(CONV, 10, 100)).isEmpty();
        assertThat(store.events(CONV, 0, 0)).isEmpty();
        assertThat(store.events("other", 0, 100)).extracting(Envelope::conversationId).containsExactly("other");
    }

    @Test
    void eventsOfConversationsInterleavedInABatchAreEachStoredWholeAndInOrder() {
        StoreBatch batch = conversation(CONV).addConversation(new ConversationRecord("other", null, T0))
                .addConversation(new ConversationRecord("third", null, T0));
        for (long seq = 1; seq <= 5; seq++) {
            batch.addEvent(delta(CONV, seq)).addEvent(delta("other", 6 - seq));
        }
        batch.addEvent(delta("third", 1)).addEvent(delta(CONV, 7)).addEvent(delta(CONV, 6));
        store.write(batch);

        assertThat(seqs(store.events(CONV, 0, 100))).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L);
        assertThat(seqs(store.events("other", 0, 100))).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(seqs(store.events("third", 0, 100))).containsExactly(1L);
        assertThat(store.lastSeq(CONV)).isEqualTo(7);
        assertThat(store.lastSeq("other")).isEqualTo(5);
    }

    @Test
    void lastSeqIsTheHighestStoredSeqOfEachConversation() {
        store.write(conversation(CONV).addConversation(new ConversationRecord("other", null, T0))
                .addEvent(delta(CONV, 1)).addEvent(delta(CONV, 2)).addEvent(delta("other", 1)));
        store.write(new StoreBatch().addEvent(delta(CONV, 3)));

        assertThat(store.lastSeq(CONV)).isEqualTo(3);
        assertThat(store.lastSeq("other")).isEqualTo(1);
        assertThat(store.lastEventSeq(CONV)).isEqualTo(3);
        assertThat(store.lastEventSeq("nope")).isZero();
    }

    @Test
    void aReservationRaisesLastSeqUntilItIsGivenBackAndSurvivesAReopen() throws Exception {
        store.write(conversation(CONV).addEvent(delta(CONV, 1)).addEvent(delta(CONV, 2)));
        store.write(new StoreBatch().reserve(CONV, 65_538).reserve("not-yet-created", 7));
        assertThat(store.lastSeq(CONV)).isEqualTo(65_538);
        assertThat(store.lastSeq("not-yet-created")).isEqualTo(7);
        assertThat(store.lastEventSeq(CONV)).as("a reservation is no event").isEqualTo(2);
        assertThat(store.lastEventSeq("not-yet-created")).isZero();
        store.close();
        store = reopen();
        assertThat(store.lastSeq(CONV)).as("after a reopen, as after a crash").isEqualTo(65_538);
        store.write(new StoreBatch().reserve(CONV, 2));
        assertThat(store.lastSeq(CONV)).as("given back, down to what is stored").isEqualTo(2);
        store.write(new StoreBatch().reserve(CONV, 0));
        assertThat(store.lastSeq(CONV)).as("never below what is stored").isEqualTo(2);
    }

    @Test
    void noConversationOrReservationItHoldsIsSurelyAbsentBeforeOrAfterAReopen() throws Exception {
        List<String> held = new ArrayList<>();
        for (int batch = 0; batch < 30; batch++) {
            StoreBatch b = new StoreBatch();
            for (int i = 0; i < 100; i++) {
                String id = "held-" + batch + "-" + i;
                b.addConversation(new ConversationRecord(id, "alice", T0));
                held.add(id);
            }
            store.write(b);
            // A reservation alone, as a new conversation's run makes before its record is stored.
            store.write(new StoreBatch().reserve("reserved-" + batch, 65_536));
            held.add("reserved-" + batch);
        }
        for (String id : held) {
            assertThat(store.surelyAbsent(id)).as(id).isFalse();
        }
        store.close();
        store = reopen();
        for (String id : held) {
            assertThat(store.surelyAbsent(id)).as(id + " after a reopen").isFalse();
        }
        store.write(new StoreBatch().addConversation(new ConversationRecord("after-reopen", "bob", T0)));
        assertThat(store.surelyAbsent("after-reopen")).isFalse();
        if (tellsNewConversations()) {
            int absent = 0;
            for (int i = 0; i < 10_000; i++) {
                if (store.surelyAbsent("never-" + i)) {
                    absent++;
                }
            }
            // A filter of 3,000-odd ids has some 0.06% false positives a layer; 1% leaves room for chance.
            assertThat(absent).as("new ids told new").isGreaterThan(9_900);
        }
    }

    @Test
    void messagesWithToolCallsComeBackOldestFirst() {
        InputMessage user = InputMessage.text("m1", Role.USER, "what is the weather in Oslo and Bergen?");
        InputMessage assistant = new InputMessage("m2", Role.ASSISTANT, "", List.of(
                new ToolCallRef("tc1", "weather", "{\"city\":\"Oslo\"}"),
                new ToolCallRef("tc2", "weather", "{\"city\":\"Bergen\"}")), null, null);
        InputMessage toolOslo = new InputMessage("m3", Role.TOOL, "rain", null, "tc1", "weather");
        InputMessage toolBergen = new InputMessage("m4", Role.TOOL, "more rain", null, "tc2", "weather");
        InputMessage answer = InputMessage.text("m5", Role.ASSISTANT, "Rain in both.");

        store.write(conversation(CONV).addMessage(row(null, user)).addMessage(row("run-1", assistant)));
        store.write(new StoreBatch().addMessage(row("run-1", toolOslo)).addMessage(row("run-1", toolBergen)));
        store.write(new StoreBatch().addMessage(row("run-1", answer)));

        assertThat(store.messages(CONV)).containsExactly(user, assistant, toolOslo, toolBergen, answer);
    }

    @Test
    void knownMessageIdsAreThoseOfTheConversationAmongTheOnesAsked() {
        StoreBatch first = conversation(CONV);
        List<String> asked = new ArrayList<>();
        for (int i = 0; i < 1_200; i++) {
            first.addMessage(row(null, InputMessage.text("m" + i, Role.USER, "message " + i)));
            asked.add("m" + i);
        }
        store.write(first);
        store.write(conversation("conv-2").addMessage(
                new StoreBatch.MessageRow("conv-2", null, InputMessage.text("other", Role.USER, "hi"), T0)));
        asked.add("other");
        asked.add("never-sent");

        assertThat(store.knownMessageIds(CONV, asked)).as("more ids than one query asks about")
                .hasSize(1_200).contains("m0", "m499", "m500", "m1199").doesNotContain("other", "never-sent");
        assertThat(store.knownMessageIds(CONV, List.of("never-sent", "m7"))).containsExactly("m7");
        for (int n = 1; n <= 10; n++) {
            assertThat(store.knownMessageIds(CONV, asked.subList(asked.size() - n, asked.size())))
                    .as("the last %d ids asked", n).hasSize(Math.max(0, n - 2));
            assertThat(store.knownMessageIds(CONV, asked.subList(0, n))).as("the first %d", n).hasSize(n);
        }
        assertThat(store.knownMessageIds("conv-2", List.of("m7", "other"))).containsExactly("other");
        assertThat(store.knownMessageIds("nope", List.of("m7"))).isEmpty();
        assertThat(store.knownMessageIds(CONV, List.of())).isEmpty();
    }

    @Test
    void decidingAPendingApprovalByUpsertLeavesNoPendingApprovals() {
        ApprovalRecord first = pending("ap-1", 4);
        ApprovalRecord second = pending("ap-2", 9);
        store.write(conversation(CONV).putApproval(second).putApproval(first));

        assertThat(store.pendingApprovals(CONV)).containsExactly(first, second);
        assertThat(store.approval("ap-1")).contains(first);

        ApprovalRecord approved = first.decided(true, "fine", "bob", T0 + 100);
        ApprovalRecord rejected = second.decided(false, null, "carol", T0 + 200);
        store.write(new StoreBatch().putApproval(approved));
        assertThat(store.pendingApprovals(CONV)).containsExactly(second);
        store.write(new StoreBatch().putApproval(rejected));

        assertThat(store.pendingApprovals(CONV)).isEmpty();
        assertThat(store.approval("ap-1")).contains(approved);
        assertThat(store.approval("ap-2")).contains(rejected);
    }

    @Test
    void dataSurvivesCloseAndReopenOfTheSameStorage() throws Exception {
        InputMessage message = new InputMessage("m1", Role.ASSISTANT, "calling",
                List.of(new ToolCallRef("tc1", "search", "{}")), null, null);
        ApprovalRecord approval = pending("ap-1", 1);
        store.write(conversation(CONV).addMessage(row("run-1", message)).addEvent(delta(CONV, 1))
                .putApproval(approval));
        store.close();

        store = reopen();

        assertThat(store.conversation(CONV)).contains(new ConversationRecord(CONV, "alice", T0));
        assertThat(store.messages(CONV)).containsExactly(message);
        assertThat(store.events(CONV, 0, 10)).containsExactly(delta(CONV, 1));
        assertThat(store.lastSeq(CONV)).isEqualTo(1);
        assertThat(store.pendingApprovals(CONV)).containsExactly(approval);
    }

    @Test
    void batchWithAnAlreadyStoredSeqRollsBackEverythingInItAndTheStoreStaysUsable() {
        store.write(conversation(CONV).addEvent(delta(CONV, 1)));

        StoreBatch bad = new StoreBatch()
                .addConversation(new ConversationRecord("conv-2", "bob", T0))
                .addMessage(new StoreBatch.MessageRow("conv-2", null, InputMessage.text("m1", Role.USER, "hi"), T0))
                .addEvent(delta("conv-2", 1))
                .addEvent(delta(CONV, 2))
                .addEvent(delta(CONV, 1))
                .putApproval(pending("ap-1", 2));

        assertThatThrownBy(() -> store.write(bad))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("seq 1 of conversation " + CONV);

        assertThat(store.conversation("conv-2")).isEmpty();
        assertThat(store.messages("conv-2")).isEmpty();
        assertThat(store.lastSeq("conv-2")).isZero();
        assertThat(store.lastSeq(CONV)).isEqualTo(1);
        assertThat(store.approval("ap-1")).isEmpty();

        store.write(new StoreBatch().addEvent(delta(CONV, 2)));
        assertThat(seqs(store.events(CONV, 0, 10))).containsExactly(1L, 2L);
    }

    @Test
    void batchRepeatingASeqWithinItselfIsRolledBack() {
        StoreBatch bad = conversation(CONV).addEvent(delta(CONV, 1)).addEvent(delta(CONV, 2)).addEvent(delta(CONV, 2));

        assertThatThrownBy(() -> store.write(bad)).hasMessageContaining("seq 2 of conversation " + CONV);

        assertThat(store.conversation(CONV)).isEmpty();
        assertThat(store.lastSeq(CONV)).isZero();
    }

    @Test
    void eventOfAConversationNeverStoredIsRejected() {
        assertThatThrownBy(() -> store.write(new StoreBatch().addEvent(delta("ghost", 1))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ghost")
                .hasMessageContaining("FOREIGN KEY");
        assertThat(store.lastSeq("ghost")).isZero();
    }

    @Test
    void closeIsIdempotentAndLaterCallsFail() {
        store.close();
        store.close();

        assertThatThrownBy(() -> store.lastSeq(CONV)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(() -> store.write(conversation(CONV))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void readersOnOtherThreadsSeeOnlyWholeBatches() throws Exception {
        int batches = 400;
        store.write(conversation(CONV));
        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicInteger reads = new AtomicInteger();

        CompletableFuture<Void> countReader = CompletableFuture.runAsync(() -> {
            int previous = 0;
            while (writing.get()) {
                int count = store.events(CONV, 0, Integer.MAX_VALUE).size();
                assertThat(count % 2).as("events seen after %d", previous).isZero();
                assertThat(count).isGreaterThanOrEqualTo(previous);
                previous = count;
                reads.incrementAndGet();
            }
        });
        CompletableFuture<Void> seqReader = CompletableFuture.runAsync(() -> {
            while (writing.get()) {
                assertThat(store.lastSeq(CONV) % 2).isZero();
                reads.incrementAndGet();
            }
        });
        try {
            for (int i = 0; i < batches; i++) {
                store.write(new StoreBatch().addEvent(delta(CONV, 2L * i + 1)).addEvent(delta(CONV, 2L * i + 2)));
            }
        } finally {
            writing.set(false);
        }

        CompletableFuture.allOf(countReader, seqReader).get(30, TimeUnit.SECONDS);
        assertThat(reads.get()).isPositive();
        assertThat(store.lastSeq(CONV)).isEqualTo(2L * batches);
    }

    @Test
    void theNewestReservationOfAConversationInOneBatchWins() {
        store.write(new StoreBatch().reserve(CONV, 10).reserve("other", 3).reserve(CONV, 7));

        assertThat(store.lastSeq(CONV)).isEqualTo(7);
        assertThat(store.lastSeq("other")).isEqualTo(3);
    }

    @Test
    void anApprovalAskedAndDecidedInOneBatchIsStoredDecided() {
        ApprovalRecord asked = pending("ap-1", 4);
        ApprovalRecord approved = asked.decided(true, null, "bob", T0 + 1);
        store.write(conversation(CONV).putApproval(asked).putApproval(pending("ap-2", 5)).putApproval(approved));

        assertThat(store.approval("ap-1")).contains(approved);
        assertThat(store.pendingApprovals(CONV)).extracting(ApprovalRecord::approvalId).containsExactly("ap-2");
    }

    @Test
    void pendingApprovalsOfEveryConversationComeOldestFirstAPageAtATime() {
        ApprovalRecord first = pending("ap-3", 9);
        ApprovalRecord second = new ApprovalRecord("other", "run-2", 1, pending("ap-1", 1).request(),
                ApprovalRecord.Status.PENDING, null, null, null);
        ApprovalRecord third = pending("ap-2", 12);
        store.write(conversation(CONV).addConversation(new ConversationRecord("other", null, T0)).putApproval(first));
        store.write(new StoreBatch().putApproval(second));
        store.write(new StoreBatch().putApproval(third));
        store.write(new StoreBatch().putApproval(pending("ap-4", 13).decided(false, null, "bob", T0)));

        assertThat(store.countPendingApprovals()).isEqualTo(3);
        assertThat(store.pendingApprovals(10, 0)).containsExactly(first, second, third);
        assertThat(store.pendingApprovals(2, 1)).containsExactly(second, third);
        assertThat(store.pendingApprovals(10, 3)).isEmpty();

        store.write(new StoreBatch().putApproval(first.decided(true, null, "carol", T0 + 1)));
        assertThat(store.countPendingApprovals()).isEqualTo(2);
        assertThat(store.pendingApprovals(1, 0)).containsExactly(second);
    }

    @Test
    void unfinishedRunsAreTheRunStartsWithNoEndStored() {
        Envelope finished = new Envelope(CONV, "run-1", 1, T0, new Event.RunStarted(null));
        Envelope failed = new Envelope(CONV, "run-2", 4, T0, new Event.RunStarted(null));
        Envelope open = new Envelope(CONV, "run-3", 6, T0, new Event.RunStarted(null));
        Envelope elsewhere = new Envelope("other", "run-1", 1, T0, new Event.RunStarted(null));
        store.write(conversation(CONV).addConversation(new ConversationRecord("other", null, T0))
                .addEvent(finished).addEvent(delta(CONV, 2))
                .addEvent(new Envelope(CONV, "run-1", 3, T0, new Event.RunFinished()))
                .addEvent(failed)
                .addEvent(new Envelope(CONV, "run-2", 5, T0, new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, "x")))
                .addEvent(open).addEvent(delta(CONV, 7))
                .addEvent(elsewhere));

        assertThat(store.unfinishedRuns()).containsExactlyInAnyOrder(open, elsewhere);
    }

    @Test
    void theLastRunBoundaryIsTheNewestRunStartOrEndAtOrBelowTheSeqAsked() {
        Envelope started = new Envelope(CONV, "run-1", 1, T0, new Event.RunStarted(null));
        Envelope finished = new Envelope(CONV, "run-1", 3, T0, new Event.RunFinished());
        Envelope again = new Envelope(CONV, "run-2", 4, T0, new Event.RunStarted(null));
        store.write(conversation(CONV).addConversation(new ConversationRecord("other", null, T0))
                .addEvent(started).addEvent(delta(CONV, 2)).addEvent(finished).addEvent(again)
                .addEvent(delta(CONV, 5)).addEvent(delta(CONV, 6))
                .addEvent(new Envelope("other", "run-9", 1, T0, new Event.RunStarted(null))));

        assertThat(store.lastRunBoundary(CONV, 6)).contains(again);
        assertThat(store.lastRunBoundary(CONV, 4)).contains(again);
        assertThat(store.lastRunBoundary(CONV, 3)).contains(finished);
        assertThat(store.lastRunBoundary(CONV, 2)).contains(started);
        assertThat(store.lastRunBoundary(CONV, 0)).isEmpty();
        assertThat(store.lastRunBoundary("unknown", 10)).isEmpty();
    }

    protected static List<Event> oneEventOfEachKind() {
        ObjectNode arguments = Json.object().put("path", "/tmp/x").put("force", true).put("depth", 3)
                .put("ratio", 0.25);
        arguments.putNull("owner");
        arguments.putArray("tags").add("a").add(2);
        ObjectNode state = Json.object();
        state.putObject("cart").putArray("items").addObject().put("sku", "A-1").put("qty", 2);
        ArrayNode patch = Json.MAPPER.createArrayNode();
        patch.addObject().put("op", "replace").put("path", "/cart/items/0/qty").put("value", 3);
        return List.of(
                new Event.RunStarted(null),
                new Event.StepStarted("thinking"),
                new Event.StepFinished("thinking"),
                new Event.MessageStarted("m1", Role.ASSISTANT),
                new Event.TextDelta("m1", "Hé, "),
                new Event.MessageCompleted("m1", "Hé, \"quoted\" ✓", List.of(
                        new Citation("c1", "web", "A page", "https://example.org/a", 3),
                        new Citation("c2", "document", "A file", "file:///b.pdf", null))),
                new Event.ReasoningStarted("r1"),
                new Event.ReasoningDelta("r1", "Because ✓"),
                new Event.ReasoningCompleted("r1", "Because ✓"),
                new Event.ToolCallStarted("tc1", "delete_file", "m1"),
                new Event.ToolCallArgs("tc1", "{\"path\":"),
                new Event.ToolCallCompleted("tc1", "delete_file", arguments),
                new Event.ToolResult("tc1", "delete_file", arguments, false, "permission denied", "m2"),
                new Event.ApprovalRequested("ap-1", "tc1", "delete_file", "Delete /tmp/x", arguments,
                        "the user asked", RiskLevel.HIGH),
                new Event.ApprovalResolved("ap-1", false, null, "bob"),
                new Event.StateSnapshot(state),
                new Event.StateDelta(patch),
                new Event.Custom("progress", Json.object().put("percent", 40)),
                new Event.Usage("gpt-x", 1200, 80, 12L, null),
                new Event.RunFinished(),
                new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, "the model timed out"));
    }

    protected static StoreBatch conversation(String id) {
        return new StoreBatch().addConversation(new ConversationRecord(id, "alice", T0));
    }

    protected static Envelope delta(String conversationId, long seq) {
        return new Envelope(conversationId, "run-1", seq, T0 + seq, new Event.TextDelta("m1", "part " + seq));
    }

    protected static StoreBatch.MessageRow row(String runId, InputMessage message) {
        return new StoreBatch.MessageRow(CONV, runId, message, T0);
    }

    protected static ApprovalRecord pending(String approvalId, long seq) {
        Event.ApprovalRequested request = new Event.ApprovalRequested(approvalId, "tc-" + approvalId, "delete_file",
                "Delete a file", Json.object().put("path", "/tmp/" + approvalId), "", RiskLevel.MEDIUM);
        return new ApprovalRecord(CONV, "run-1", seq, request, ApprovalRecord.Status.PENDING, null, null, null);
    }

    protected static List<Long> seqs(List<Envelope> events) {
        return events.stream().map(Envelope::seq).toList();
    }

    @Test
    void documentsAreInsertedOnceReplacedOnRequestListedInOrderAndSurviveAReopen() throws Exception {
        assertThat(store.putDocument("calls", "b", "{\"n\":1}", false)).isTrue();
        assertThat(store.putDocument("calls", "a", "{\"n\":2}", false)).isTrue();
        assertThat(store.putDocument("calls", "b", "{\"n\":3}", false)).isFalse();
        assertThat(store.document("calls", "b")).contains("{\"n\":1}");
        assertThat(store.putDocument("calls", "b", "{\"n\":4}", true)).isTrue();
        assertThat(store.putDocument("humans", "b", "{}", false)).isTrue();
        store.close();
        store = reopen();
        assertThat(store.documents("calls")).containsExactly("{\"n\":4}", "{\"n\":2}");
        assertThat(store.document("calls", "zzz")).isEmpty();
    }
}
