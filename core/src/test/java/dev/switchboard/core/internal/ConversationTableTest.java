package dev.switchboard.core.internal;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.InMemoryConversationStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class ConversationTableTest {
    private final InMemoryConversationStore store = new InMemoryConversationStore();
    private final StoreWriter writer = new StoreWriter(store, new HubMetrics(new SimpleMeterRegistry()));
    private final ConversationTable table = new ConversationTable(store, System::currentTimeMillis);
    private final Emitter emitter = new Emitter(store, writer, Runnable::run, System::currentTimeMillis, table, null);

    @AfterEach
    void stopTheWriter() {
        writer.stop().join();
    }

    /** Emits {@code count} text deltas of one run in the conversation, at once, and waits until they are stored. */
    private void streamAndStore(ConversationState c, int count) throws Exception {
        synchronized (c) {
            for (int i = 0; i < count; i++) {
                emitter.emitLocked(c, null, "run_1", new Event.TextDelta("msg_1", "chunk " + i), null);
            }
        }
        CompletableFuture<Void> stored = new CompletableFuture<>();
        writer.run(() -> stored.complete(null));
        stored.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aTailThatGrewWhileARunStreamedIsReplacedBySmallOneOnceTheStoreHasItsEvents() throws Exception {
        ConversationState streamed = table.load("c_streamed");
        ConversationState chatted = table.load("c_chatted");
        ArrayDeque<Envelope> grown;
        synchronized (streamed) {
            for (int i = 0; i < 200; i++) {
                emitter.emitLocked(streamed, null, "run_1", new Event.TextDelta("msg_1", "chunk " + i), null);
            }
            grown = streamed.tail;
            assertThat(grown).as("every event stays in the tail until it is stored").hasSize(200);
        }
        ArrayDeque<Envelope> small = chatted.tail;
        streamAndStore(streamed, 0);
        streamAndStore(chatted, ConversationState.TAIL_KEPT_IDLE);

        // Not at the next sweep, a minute later: until then the grown array outlives young collections.
        assertThat(streamed.tail).as("the grown tail is replaced").isNotSameAs(grown).isEmpty();
        assertThat(streamed.tailGrew).isFalse();
        assertThat(chatted.tail).as("a tail that never held more than it keeps stays").isSameAs(small).isEmpty();

        // The new tail works as the old one: a resume reads what it holds until it is stored.
        streamAndStore(streamed, 3);
        assertThat(store.events("c_streamed", 0, Integer.MAX_VALUE)).hasSize(203)
                .extracting(Envelope::seq).startsWith(1L, 2L).endsWith(202L, 203L);
    }

    @Test
    void aGrownTailWithEventsOnTheirWayToTheStoreIsKept() throws Exception {
        ConversationState c = table.load("c_busy");
        synchronized (c) {
            for (int i = 0; i < 200; i++) {
                emitter.emitLocked(c, null, "run_1", new Event.TextDelta("msg_1", "chunk " + i), null);
            }
            ArrayDeque<Envelope> tail = c.tail;
            // The writer may store them meanwhile, as it does under load, but gives them back to the
            // tail only under the conversation's lock, which this holds: the sweep sees them unstored.
            table.evictIdle();
            assertThat(c.tail).isSameAs(tail).hasSize(200);
        }
        streamAndStore(c, 0);
        assertThat(c.tail).isEmpty();
        assertThat(store.events("c_busy", 0, Integer.MAX_VALUE)).hasSize(200);
    }

    @Test
    void aConversationMakesNoneOfTheCollectionsOnlyAClusterOrAnOutsideDecisionUses() throws Exception {
        ConversationState c = table.load("c_alone");
        streamAndStore(c, 3);
        // A conversation's state lives as long as the conversation is in memory: what most never use costs nothing.
        assertThat(c.held).isNull();
        assertThat(c.outgoing).isNull();
        assertThat(c.remoteMessages).isNull();
        assertThat(c.remoteResolved).isNull();
        assertThat(c.decidedExternally).isNull();
    }
}
