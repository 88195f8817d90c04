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
    void aQuietConversationsTailThatGrewWhileItStreamedIsReplacedBySmallOne() throws Exception {
        ConversationState streamed = table.load("c_streamed");
        ConversationState chatted = table.load("c_chatted");
        streamAndStore(streamed, 200);
        streamAndStore(chatted, ConversationState.TAIL_KEPT_IDLE);
        ArrayDeque<Envelope> grown = streamed.tail;
        ArrayDeque<Envelope> small = chatted.tail;
        assertThat(grown).as("stored events leave the tail").isEmpty();

        table.evictIdle();

        assertThat(streamed.tail).as("the grown tail is replaced").isNotSameAs(grown).isEmpty();
        assertThat(streamed.tailGrew).isFalse();
        assertThat(chatted.tail).as("a tail that never held more than it keeps stays").isSameAs(small);

        // The new tail works as the old one: a resume reads what it holds until it is stored.
        streamAndStore(streamed, 3);
        assertThat(store.events("c_streamed", 0, Integer.MAX_VALUE)).hasSize(203)
                .extracting(Envelope::seq).startsWith(1L, 2L).endsWith(202L, 203L);
    }

    @Test
    void aTailWithEventsOnTheirWayToTheStoreIsKept() throws Exception {
        ConversationState c = table.load("c_busy");
        streamAndStore(c, 200);
        synchronized (c) {
            emitter.emitLocked(c, null, "run_1", new Event.TextDelta("msg_1", "not stored yet"), null);
            ArrayDeque<Envelope> tail = c.tail;
            // The writer may store it meanwhile, as it does under load: the sweep runs on the writer
            // after it. Here the sweep runs first, with the event still in the tail.
            table.evictIdle();
            assertThat(c.tail).isSameAs(tail).hasSize(1);
        }
    }
}
