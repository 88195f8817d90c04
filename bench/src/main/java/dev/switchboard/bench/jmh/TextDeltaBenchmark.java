package dev.switchboard.bench.jmh;

import dev.switchboard.bench.Dialect;
import dev.switchboard.bench.TextDeltaCase;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * The hot path ({@link TextDeltaCase}): one text delta encoded by a session in the middle of a
 * streamed message into a reused Netty buffer and through the gateway's own writer, and the
 * naive baseline for the same frame.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class TextDeltaBenchmark {
    @Param({"hai-ws", "agui-ws", "agui-sse", "voiceassist-ws", "agentscope-sse"})
    public String dialect;

    private TextDeltaCase c;

    @Setup(Level.Trial)
    public void setUp() {
        c = new TextDeltaCase(Dialect.of(dialect));
    }

    @Benchmark
    public long encode() throws IOException {
        return c.encode();
    }

    /** The same session writing through the gateway's own writer, a pooled buffer per frame. */
    @Benchmark
    public long encodeServerWriter() throws IOException {
        return c.encodeServerWriter();
    }

    @Benchmark
    public byte[] naive() throws IOException {
        return c.naive();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        c.close();
    }
}
