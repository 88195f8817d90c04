package dev.switchboard.bench.jmh;

import dev.switchboard.core.spi.ConversationRecord;
import dev.switchboard.core.spi.StoreBatch;
import dev.switchboard.store.sqlite.SqliteConversationStore;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A new conversation's seq reservation in the SQLite store, which its first event waits for:
 * each call reserves seqs for a conversation not seen before, while another thread commits a
 * small batch of rows every {@value #WRITER_SPACING_MS} ms, as the hub's store writer did while
 * conversations stream at a model's pace (it now waits 50 ms between such commits; the writes to
 * the events file only share the machine with the reservations, whose file is their own). Sampled, so its percentiles show the reservations that
 * pay for a checkpoint of the reservations file: SQLite runs one in the commit that brings its log
 * to 1,000 pages, some 3 ms once every 700 or so reservations (bench/NOTES.md, "What a new
 * conversation's first token waits for").
 * <pre>
 * java -cp bench/target/switchboard-bench.jar org.openjdk.jmh.Main SeqReservationBenchmark -f 1 -wi 2 -i 5
 * </pre>
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
public class SeqReservationBenchmark {
    /** How often the other thread commits a batch of rows. */
    static final int WRITER_SPACING_MS = 5;

    private Path dir;
    private SqliteConversationStore store;
    private Thread writer;
    private long next;

    @Setup(Level.Trial)
    public void open() throws IOException {
        dir = Files.createTempDirectory("switchboard-seqs-bench");
        store = SqliteConversationStore.open(dir);
        writer = new Thread(() -> {
            long n = 0;
            while (!Thread.currentThread().isInterrupted()) {
                store.write(new StoreBatch().addConversation(new ConversationRecord("batch-" + n++, "bench", 1)));
                try {
                    Thread.sleep(WRITER_SPACING_MS);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "store-writer");
        writer.setDaemon(true);
        writer.start();
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        writer.interrupt();
        writer.join();
        store.close();
        SqliteStoreBenchmark.delete(dir);
    }

    @Benchmark
    public void reserveNewConversation() {
        store.write(new StoreBatch().reserve("conversation-" + next++, 4096));
    }
}
