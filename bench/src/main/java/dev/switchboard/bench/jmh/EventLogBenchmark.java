package dev.switchboard.bench.jmh;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectWriter;
import dev.switchboard.bench.EventSamples;
import dev.switchboard.core.Event;
import dev.switchboard.core.EventCodec;
import dev.switchboard.core.Json;
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

/**
 * One event turned into the event log's JSON, as the store does for every event before the hub
 * fans it out: {@link EventCodec#toJson} (the streaming generator) against databind's
 * {@code writeValueAsString} with the {@code type} id, which wrote the same text before.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class EventLogBenchmark {
    private static final ObjectWriter DATABIND = Json.MAPPER.writerFor(Event.class);

    /** An {@link Event.Kind}; the event is its {@link EventSamples#sample}. */
    @Param({"TEXT_DELTA", "TOOL_CALL_COMPLETED", "MESSAGE_COMPLETED"})
    public String kind;

    private Event event;

    @Setup(Level.Trial)
    public void setUp() throws JsonProcessingException {
        event = EventSamples.sample(Event.Kind.valueOf(kind));
        if (!EventCodec.toJson(event).equals(DATABIND.writeValueAsString(event))) {
            throw new IllegalStateException(kind + ": the two forms differ");
        }
    }

    @Benchmark
    public String databind() throws JsonProcessingException {
        return DATABIND.writeValueAsString(event);
    }

    @Benchmark
    public String streaming() {
        return EventCodec.toJson(event);
    }
}
