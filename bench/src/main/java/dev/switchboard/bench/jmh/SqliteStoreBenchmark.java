package dev.switchboard.bench.jmh;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.ConversationRecord;
import dev.switchboard.core.spi.StoreBatch;
import dev.switchboard.store.sqlite.SqliteConversationStore;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The SQLite store's writer under streaming load: {@link SqliteConversationStore#write} of batches
 * like the hub's store writer commits when many conversations stream at once ({@value #BATCH} text
 * deltas, the conversations' turns interleaved, each event's JSON prepared beforehand as the
 * emitting threads prepare it), and {@link SqliteConversationStore#events} of a conversation's
 * history, as a resume reads it. Scores are per event.
 * <pre>
 * java -cp bench/target/switchboard-bench.jar org.openjdk.jmh.Main SqliteStoreBenchmark \
 *     -prof dev.switchboard.bench.jmh.ThreadCpuProfiler
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SqliteStoreBenchmark {
    /** Events in a batch: the hub's store writer takes up to 512 queued writes at a time. */
    static final int BATCH = 512;
    /** Events of a conversation's history that {@link #read} reads. */
    static final int HISTORY = 256;
    /** Events of a run of {@link Runs}: its start, a step, a message of 100 deltas, their ends. */
    static final int RUN_EVENTS = 106;
    /** Runs in a batch of {@link Runs}. */
    static final int RUNS_PER_BATCH = 77;

    private static final long T0 = 1_700_000_000_000L;
    private static final String[] WORDS = {" The", " quick", " brown fox", " jumps", " over", " the lazy", " dog", "."};

    /** Conversations streaming at once, each with its run, message and prepared deltas. */
    @State(Scope.Thread)
    public static class Conversations {
        /** How many conversations share each batch: about {@value #BATCH} / this many events each. */
        @Param({"50", "500"})
        public int conversations;

        String[] ids;
        String[] runIds;
        Event[][] deltas;
        Object[][] prepared;
        long[] seqs;
        int next;
        final StoreBatch batch = new StoreBatch();

        void create(SqliteConversationStore store) {
            ids = new String[conversations];
            runIds = new String[conversations];
            deltas = new Event[conversations][WORDS.length];
            prepared = new Object[conversations][WORDS.length];
            seqs = new long[conversations];
            next = 0;
            StoreBatch created = new StoreBatch();
            for (int c = 0; c < conversations; c++) {
                ids[c] = conversationId(c);
                runIds[c] = String.format("%08x-7f3a-4e21-8c55-%012x", c, 17L * c + 3);
                String messageId = String.format("msg_%024x", 1_000_003L * c);
                for (int w = 0; w < WORDS.length; w++) {
                    deltas[c][w] = new Event.TextDelta(messageId, WORDS[w]);
                    prepared[c][w] = store.prepare(new Envelope(ids[c], runIds[c], 1, T0, deltas[c][w]));
                }
                created.addConversation(new ConversationRecord(ids[c], "user-" + c, T0));
            }
            store.write(created);
        }

        /** The next {@value #BATCH} events, the conversations in turn. */
        StoreBatch nextBatch() {
            batch.clear();
            long ts = T0 + next;
            for (int i = 0; i < BATCH; i++) {
                int c = next++ % conversations;
                int w = (int) (seqs[c] % WORDS.length);
                long seq = ++seqs[c];
                batch.addEvent(new Envelope(ids[c], runIds[c], seq, ts + (i >> 6), deltas[c][w]), prepared[c][w]);
            }
            return batch;
        }
    }

    /**
     * Whole runs of many conversations, as the hub's store writer commits them at the end-to-end
     * phase's 1,000-client point: the demo agent emits a run's {@value #RUN_EVENTS} events at once,
     * so a batch holds whole runs ({@value #RUNS_PER_BATCH} of them, some 8,000 events, where the
     * writer's queue ends a batch's linger), each with its client's message and the agent's answer
     * as history rows; every client streams its runs into one conversation of its own.
     */
    @State(Scope.Thread)
    public static class Runs {
        @Param({"1000"})
        public int conversations;

        Path dir;
        SqliteConversationStore store;
        String[] ids;
        long[] seqs;
        int next;
        long runs;
        final StoreBatch batch = new StoreBatch();

        @Setup(Level.Iteration)
        public void open() throws IOException {
            dir = Files.createTempDirectory("sqlite-store-bench");
            store = SqliteConversationStore.open(dir);
            ids = new String[conversations];
            seqs = new long[conversations];
            next = 0;
            StoreBatch created = new StoreBatch();
            for (int c = 0; c < conversations; c++) {
                ids[c] = conversationId(c);
                created.addConversation(new ConversationRecord(ids[c], "user-" + c, T0));
            }
            store.write(created);
        }

        @TearDown(Level.Iteration)
        public void close() {
            store.close();
            delete(dir);
        }

        /**
         * Makes the next {@value #RUNS_PER_BATCH} runs, each of the next conversation in turn, outside
         * the measured time: the emitting threads make the events and their prepared JSON.
         */
        @Setup(Level.Invocation)
        public void nextBatch() {
            batch.clear();
            for (int r = 0; r < RUNS_PER_BATCH; r++) {
                int c = next++ % conversations;
                long run = ++runs;
                String runId = String.format("run-%016x", run);
                String messageId = String.format("msg_%024x", run);
                long ts = T0 + run;
                StringBuilder answer = new StringBuilder();
                add(c, runId, ts, new Event.RunStarted(null));
                add(c, runId, ts, new Event.StepStarted("answer"));
                add(c, runId, ts, new Event.MessageStarted(messageId, Role.ASSISTANT));
                for (int i = 0; i < RUN_EVENTS - 6; i++) {
                    String word = WORDS[i % WORDS.length];
                    answer.append(word);
                    add(c, runId, ts, new Event.TextDelta(messageId, word));
                }
                add(c, runId, ts, new Event.MessageCompleted(messageId, answer.toString(), List.of()));
                add(c, runId, ts, new Event.StepFinished("answer"));
                add(c, runId, ts, new Event.RunFinished());
                batch.addMessage(new StoreBatch.MessageRow(ids[c], runId, new InputMessage(
                        String.format("in_%024x", run), Role.USER, "stream please", null, null, null), ts));
                batch.addMessage(new StoreBatch.MessageRow(ids[c], runId, new InputMessage(
                        messageId, Role.ASSISTANT, answer.toString(), null, null, null), ts));
            }
        }

        private void add(int c, String runId, long ts, Event event) {
            Envelope e = new Envelope(ids[c], runId, ++seqs[c], ts, event);
            batch.addEvent(e, store.prepare(e));
        }
    }

    /** A new store for every iteration, so each starts from an empty file. */
    @State(Scope.Thread)
    public static class Writing {
        Path dir;
        SqliteConversationStore store;
        Conversations conversations;

        @Setup(Level.Iteration)
        public void open(Conversations conversations) throws IOException {
            dir = Files.createTempDirectory("sqlite-store-bench");
            store = SqliteConversationStore.open(dir);
            conversations.create(store);
            // Kept here: a benchmark method that also took Conversations would get an instance of its own.
            this.conversations = conversations;
        }

        @TearDown(Level.Iteration)
        public void close() {
            store.close();
            delete(dir);
        }
    }

    /** A store whose conversations each hold {@value #HISTORY} events, written as the hub writes them. */
    @State(Scope.Thread)
    public static class Reading {
        Path dir;
        SqliteConversationStore store;
        String[] ids;
        int next;

        @Setup(Level.Trial)
        public void open(Conversations conversations) throws IOException {
            dir = Files.createTempDirectory("sqlite-store-bench");
            store = SqliteConversationStore.open(dir);
            conversations.create(store);
            for (long written = 0; written < (long) HISTORY * conversations.conversations; written += BATCH) {
                store.write(conversations.nextBatch());
            }
            ids = conversations.ids;
        }

        @TearDown(Level.Trial)
        public void close() {
            store.close();
            delete(dir);
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void write(Writing writing) {
        writing.store.write(writing.conversations.nextBatch());
    }

    @Benchmark
    @OperationsPerInvocation(RUNS_PER_BATCH * RUN_EVENTS)
    public void writeRuns(Runs runs) {
        runs.store.write(runs.batch);
    }

    @Benchmark
    @OperationsPerInvocation(HISTORY)
    public List<Envelope> read(Reading reading) {
        String id = reading.ids[reading.next++ % reading.ids.length];
        List<Envelope> events = reading.store.events(id, 0, HISTORY);
        if (events.size() != HISTORY) {
            throw new IllegalStateException(id + " has " + events.size() + " events stored, not " + HISTORY);
        }
        return events;
    }

    /** The id of the benchmark's {@code c}-th conversation, shaped like the UUIDs clients choose. */
    private static String conversationId(int c) {
        return String.format("%08x-5a1e-4c0d-9b7e-%012x", c, 31L * c + 7);
    }

    /** Deletes a benchmark's store directory and everything in it. */
    static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
