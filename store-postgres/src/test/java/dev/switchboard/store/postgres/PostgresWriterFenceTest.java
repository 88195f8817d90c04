package dev.switchboard.store.postgres;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.spi.ConversationRecord;
import dev.switchboard.core.spi.StoreBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Writer fences on PostgreSQL: a node that takes a conversation over raises its fence, and what a
 * writer still holding the old fence writes afterwards is left out, the rest of its batch stored.
 */
class PostgresWriterFenceTest {
    @RegisterExtension
    static final PostgresServer postgres = new PostgresServer();

    private static final long T0 = 1_700_000_000_000L;

    private static PostgresConversationStore open(String url) {
        return PostgresConversationStore.open(PostgresUrl.parse(url), 4);
    }

    private static Envelope chunk(String conversationId, long seq) {
        return new Envelope(conversationId, "run-1", seq, T0 + seq, new Event.TextDelta("msg-1", "part " + seq));
    }

    /** Begins a transaction on {@code writer} that holds the conversation's fence bucket shared, as a batch does. */
    private static void holdBucketAsABatch(Connection writer, String conversationId) throws SQLException {
        writer.setAutoCommit(false);
        try (Statement s = writer.createStatement()) {
            s.execute("SELECT pg_advisory_xact_lock_shared(" + PostgresConversationStore.FENCE_LOCK + ", "
                    + PostgresConversationStore.fenceBucket(conversationId) + ")");
        }
    }

    @Test
    void aFenceStartsWhereItIsAskedAndEachRaiseGoesAboveTheLast() {
        try (PostgresConversationStore store = open(postgres.newDatabase())) {
            assertThat(store.raiseFence("conv", 3)).isEqualTo(3);
            assertThat(store.raiseFence("conv", 3)).as("asked for no more than it has: one above").isEqualTo(4);
            assertThat(store.raiseFence("conv", 9)).isEqualTo(9);
            assertThat(store.raiseFence("conv", 1)).as("a bus that forgot its fences").isEqualTo(10);
            assertThat(store.raiseFence("other", 1)).isEqualTo(1);
        }
    }

    @Test
    void whatAWriterWritesUnderAFenceRaisedSinceIsLeftOutAndTheRestOfItsBatchStored() {
        try (PostgresConversationStore store = open(postgres.newDatabase())) {
            store.write(new StoreBatch().addConversation(new ConversationRecord("taken", null, T0))
                    .addConversation(new ConversationRecord("kept", null, T0))
                    .addEvent(chunk("taken", 1)).addEvent(chunk("kept", 1)).fence("taken", 0).fence("kept", 0));
            store.raiseFence("taken", 1);

            store.write(new StoreBatch().addEvent(chunk("taken", 2)).addEvent(chunk("kept", 2))
                    .fence("taken", 0).fence("kept", 0));
            store.write(new StoreBatch().addConversation(new ConversationRecord("unfenced", null, T0))
                    .addEvent(chunk("taken", 3)).addEvent(chunk("unfenced", 1)));

            assertThat(store.events("taken", 0, 10)).as("the old writer's seq 2 left out; an unfenced write stored")
                    .extracting(Envelope::seq).containsExactly(1L, 3L);
            assertThat(store.events("kept", 0, 10)).extracting(Envelope::seq).containsExactly(1L, 2L);

            store.write(new StoreBatch().addEvent(chunk("taken", 4)).fence("taken", 1));
            assertThat(store.events("taken", 0, 10)).as("the new writer's fence").extracting(Envelope::seq)
                    .containsExactly(1L, 3L, 4L);
        }
    }

    @Test
    void aFenceIsRaisedOnlyOnceTheBatchesWritingItsConversationHaveCommitted() throws Exception {
        String url = postgres.newDatabase();
        try (PostgresConversationStore store = open(url);
             Connection writer = postgres.connect(url)) {
            // A batch of another node under way: it holds the conversation's bucket as every batch does.
            holdBucketAsABatch(writer, "conv");

            CompletableFuture<Long> raised = CompletableFuture.supplyAsync(() -> store.raiseFence("conv", 1));
            Thread.sleep(500);
            assertThat(raised).as("raised while a batch writing the conversation has not committed").isNotDone();

            writer.commit();
            assertThat(raised.get(10, TimeUnit.SECONDS)).isEqualTo(1);
            store.write(new StoreBatch().addConversation(new ConversationRecord("conv", null, T0))
                    .addEvent(chunk("conv", 1)).fence("conv", 1));
            assertThat(store.events("conv", 0, 10)).hasSize(1);
        }
    }

    @Test
    void aBatchOfAGatewayThatStoppedMidTransactionHoldsUpAFenceOnlyUntilPostgresEndsItsSession() throws Exception {
        String url = postgres.newDatabase();
        try (PostgresConversationStore stopped = PostgresConversationStore.open(PostgresUrl.parse(url), 2,
                Duration.ofSeconds(1));
             PostgresConversationStore taker = open(url);
             Connection batch = stopped.connection()) {
            // The store's own session, inside a batch's transaction, that sends nothing more (its gateway paused).
            holdBucketAsABatch(batch, "conv");

            CompletableFuture<Long> raised = CompletableFuture.supplyAsync(() -> taker.raiseFence("conv", 1));

            assertThat(raised.get(30, TimeUnit.SECONDS)).as("raised once PostgreSQL ended the idle session").isEqualTo(1);
            assertThatThrownBy(() -> batch.createStatement().execute("SELECT 1")).as("the ended session")
                    .isInstanceOf(SQLException.class);
        }
    }

    @Test
    void aTakeOverRaisesTheFenceThenReadsWhatTheBatchesBehindItStoredAndReservesTheSeqsAfter() throws Exception {
        String url = postgres.newDatabase();
        try (PostgresConversationStore store = open(url);
             Connection writer = postgres.connect(url);
             Statement s = writer.createStatement()) {
            store.write(new StoreBatch().addConversation(new ConversationRecord("conv", null, T0))
                    .addEvent(chunk("conv", 1)).reserve("conv", 5).fence("conv", 0));
            // The old writer's batch under way, storing seq 9 above its reservation's top as a stale writer might.
            holdBucketAsABatch(writer, "conv");
            s.execute("INSERT INTO events (conversation_id, seq, run_id, ts, kind, payload) VALUES "
                    + "('conv', 9, 'run-1', " + T0 + ", 'TEXT_DELTA', '{}')");

            var raised = CompletableFuture.supplyAsync(() -> store.raiseFenceAndReserve("conv", 1, 100));
            Thread.sleep(500);
            assertThat(raised).as("raised while a batch writing the conversation has not committed").isNotDone();
            writer.commit();

            assertThat(raised.get(10, TimeUnit.SECONDS)).as("the seq the batch behind the fence stored")
                    .isEqualTo(new PostgresConversationStore.RaisedFence(1, 9));
            assertThat(store.lastSeq("conv")).as("the seqs after it reserved").isEqualTo(109);
            assertThat(store.raiseFenceAndReserve("conv", 1, 1)).as("a reservation never lowered")
                    .isEqualTo(new PostgresConversationStore.RaisedFence(2, 109));
            assertThat(store.lastSeq("conv")).isEqualTo(110);
        }
    }
}
