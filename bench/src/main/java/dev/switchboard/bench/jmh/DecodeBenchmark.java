package dev.switchboard.bench.jmh;

import dev.switchboard.bench.Dialect;
import dev.switchboard.bench.EventSamples;
import dev.switchboard.bench.InboundSamples;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.DialectSession;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.util.concurrent.TimeUnit;

/** Every client-to-server message of every dialect decoded into commands by its session. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class DecodeBenchmark {
    /** A key of {@link InboundSamples}. */
    @Param({"hai-ws:user_message"})
    public String message;

    private DialectSession session;
    private String text;

    @Setup(Level.Trial)
    public void setUp() {
        Dialect d = InboundSamples.dialect(message);
        session = d.newSession(d.adapter(), EventSamples.CONVERSATION);
        text = InboundSamples.text(message);
        if (session.decode(text) instanceof Decoded.Failure f) {
            throw new IllegalStateException(message + " does not decode: " + f.error().message());
        }
    }

    @Benchmark
    public Decoded decode() {
        return session.decode(text);
    }
}
