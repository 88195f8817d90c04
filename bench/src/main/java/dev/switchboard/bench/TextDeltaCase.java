package dev.switchboard.bench;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.WireAdapter;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The hot-path measurement, shared by the JMH benchmark and the CPU-time one: one text delta
 * encoded by a session in the middle of a streamed message, through the gateway's kind of
 * writer or the one-generator what-if, and the naive baseline for the same frame.
 *
 * <p>Sessions are replaced every {@value #RESET_EVERY} deltas (a new session and its run's start,
 * about 1/4096 of a run's cost per delta), because a session that keeps the text streamed so far
 * (AgentScope's) would otherwise grow without bound.
 */
public final class TextDeltaCase implements AutoCloseable {
    static final int RESET_EVERY = 4096;

    private final Dialect d;
    private final WireAdapter adapter;
    private final BufferFrameWriter out;
    private final OneGeneratorFrameWriter oneOut;
    private final Envelope delta;
    private DialectSession session;
    private DialectSession oneSession;
    private int sinceReset;
    private int oneSinceReset;
    private long counter;

    public TextDeltaCase(Dialect d) {
        this.d = d;
        this.adapter = d.adapter();
        this.out = BufferFrameWriter.counting(d);
        try {
            this.oneOut = new OneGeneratorFrameWriter(d);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.delta = EventSamples.envelope(EventSamples.sample(Event.Kind.TEXT_DELTA),
                EventSamples.before(Event.Kind.TEXT_DELTA, d).size() + 1);
        this.session = fresh(out);
        this.oneSession = fresh(oneOut);
    }

    private DialectSession fresh(dev.switchboard.core.spi.FrameWriter writer) {
        DialectSession s = d.newSession(adapter, EventSamples.CONVERSATION);
        EventSamples.prepare(s, d, Event.Kind.TEXT_DELTA, writer);
        return s;
    }

    /** Encodes one delta the gateway's way; returns the bytes written so far. */
    public long encode() throws IOException {
        if (++sinceReset == RESET_EVERY) {
            session = fresh(out);
            sinceReset = 0;
        }
        session.encode(delta, out);
        return out.bytes();
    }

    /** Encodes one delta through one generator kept for every frame (the what-if). */
    public long encodeOneGenerator() throws IOException {
        if (++oneSinceReset == RESET_EVERY) {
            oneSession = fresh(oneOut);
            oneSinceReset = 0;
        }
        oneSession.encode(delta, oneOut);
        return oneOut.bytes();
    }

    /** The naive baseline's bytes for the same frame. */
    public byte[] naive() throws IOException {
        return NaiveEncoding.textDelta(d, EventSamples.CONVERSATION, EventSamples.MESSAGE, EventSamples.DELTA,
                EventSamples.TIMESTAMP, counter++);
    }

    @Override
    public void close() {
        out.close();
        try {
            oneOut.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
