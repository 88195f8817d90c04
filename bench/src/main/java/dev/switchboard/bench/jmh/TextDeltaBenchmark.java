package dev.switchboard.bench.jmh;

import dev.switchboard.bench.BufferFrameWriter;
import dev.switchboard.bench.Dialect;
import dev.switchboard.bench.EventSamples;
import dev.switchboard.bench.NaiveEncoding;
import dev.switchboard.bench.OneGeneratorFrameWriter;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.WireAdapter;
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
 * The hot path: one text delta encoded by a session in the middle of a streamed message, into a
 * reused Netty buffer, against the naive baseline for the same frame.
 *
 * <p>The session is replaced every {@value #RESET_EVERY} deltas (a new session and its run's
 * start, about 1/4096 of a run's cost per delta), because a session that keeps the text streamed
 * so far (AgentScope's) would otherwise grow without bound.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class TextDeltaBenchmark {
    static final int RESET_EVERY = 4096;

    @Param({"hai-ws", "agui-ws", "agui-sse", "voiceassist-ws", "agentscope-sse"})
    public String dialect;

    private Dialect d;
    private WireAdapter adapter;
    private BufferFrameWriter out;
    private DialectSession session;
    private OneGeneratorFrameWriter oneOut;
    private DialectSession oneSession;
    private int oneSinceReset;
    private Envelope delta;
    private int sinceReset;
    private long counter;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        d = Dialect.of(dialect);
        adapter = d.adapter();
        out = BufferFrameWriter.counting(d);
        oneOut = new OneGeneratorFrameWriter(d);
        delta = EventSamples.envelope(EventSamples.sample(Event.Kind.TEXT_DELTA),
                EventSamples.before(Event.Kind.TEXT_DELTA, d).size() + 1);
        reset();
        resetOne();
    }

    private void resetOne() {
        oneSession = d.newSession(adapter, EventSamples.CONVERSATION);
        EventSamples.prepare(oneSession, d, Event.Kind.TEXT_DELTA, oneOut);
        oneSinceReset = 0;
    }

    private void reset() {
        session = d.newSession(adapter, EventSamples.CONVERSATION);
        EventSamples.prepare(session, d, Event.Kind.TEXT_DELTA, out);
        sinceReset = 0;
    }

    @Benchmark
    public long encode() throws IOException {
        if (++sinceReset == RESET_EVERY) {
            reset();
        }
        session.encode(delta, out);
        return out.bytes();
    }

    /** What-if: the same session writing through one generator kept for every frame. */
    @Benchmark
    public long encodeOneGenerator() throws IOException {
        if (++oneSinceReset == RESET_EVERY) {
            resetOne();
        }
        oneSession.encode(delta, oneOut);
        return oneOut.bytes();
    }

    @Benchmark
    public byte[] naive() throws IOException {
        return NaiveEncoding.textDelta(d, EventSamples.CONVERSATION, EventSamples.MESSAGE, EventSamples.DELTA,
                EventSamples.TIMESTAMP, counter++);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        out.close();
        oneOut.close();
    }
}
