package dev.switchboard.bench.jmh;

import dev.switchboard.bench.BufferFrameWriter;
import dev.switchboard.bench.Dialect;
import dev.switchboard.bench.EventSamples;
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
 * Every core event encoded by every dialect's session, each in a fresh session that has seen what
 * a run sends before that event ({@link EventSamples#before}). Most of these events come once per
 * run or step, and several change the session's state for good (an exchange is done after its
 * run's end), so each invocation gets its fresh session outside the timed part (JMH
 * {@code Level.Invocation}). As each invocation is timed anyway, JMH samples them all
 * ({@code Mode.SampleTime}) and the report gives the median, which an invocation preempted by
 * other work on the machine does not move; the timer's own cost per invocation is in the figure.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class EventBenchmark {
    /** {@code dialect/KIND}, for example {@code agui-ws/RUN_STARTED}. */
    @Param({"agui-ws/RUN_STARTED"})
    public String target;

    private Dialect d;
    private Event.Kind kind;
    private WireAdapter adapter;
    private BufferFrameWriter out;
    private Envelope event;
    private DialectSession session;

    @Setup(Level.Trial)
    public void setUp() {
        int slash = target.indexOf('/');
        d = Dialect.of(target.substring(0, slash));
        kind = Event.Kind.valueOf(target.substring(slash + 1));
        adapter = d.adapter();
        out = BufferFrameWriter.counting(d);
        event = EventSamples.envelope(EventSamples.sample(kind), EventSamples.before(kind, d).size() + 1);
    }

    @Setup(Level.Invocation)
    public void freshSession() {
        session = d.newSession(adapter, EventSamples.CONVERSATION);
        EventSamples.prepare(session, d, kind, out);
    }

    @Benchmark
    public long encode() throws IOException {
        session.encode(event, out);
        return out.bytes();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        out.close();
    }
}
