package dev.switchboard.bench;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.FrameWriter;
import dev.switchboard.core.spi.WireAdapter;
import dev.switchboard.server.internal.NettyFrameWriter;
import io.netty.channel.ChannelHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;

import java.io.IOException;

/**
 * The hot-path measurement, shared by the JMH benchmark and the CPU-time one: one text delta
 * encoded by a session in the middle of a streamed message, through the gateway's own writer
 * ({@link NettyFrameWriter}, a pooled buffer per frame from a channel's allocator, handed to a
 * sink that releases it) or through a writer like it into one reused buffer; and the naive
 * baseline for the same frame.
 *
 * <p>Sessions are replaced every {@value #RESET_EVERY} deltas (a new session and its run's start,
 * about 1/4096 of a run's cost per delta), because a session that keeps the text streamed so far
 * (AgentScope's) would otherwise grow without bound.
 */
public final class TextDeltaCase implements AutoCloseable {
    static final int RESET_EVERY = 4096;

    private final Dialect d;
    private final WireAdapter adapter;
    private final Envelope delta;
    private final BufferFrameWriter out;
    private final EmbeddedChannel channel = new EmbeddedChannel(new ChannelHandlerAdapter() {
    });
    private final Stream stream;
    private final Stream serverStream;
    private long serverBytes;
    private long counter;

    public TextDeltaCase(Dialect d) {
        this.d = d;
        this.adapter = d.adapter();
        this.delta = EventSamples.envelope(EventSamples.sample(Event.Kind.TEXT_DELTA),
                EventSamples.before(Event.Kind.TEXT_DELTA, d).size() + 1);
        this.out = BufferFrameWriter.counting(d);
        this.stream = new Stream(out);
        this.serverStream = new Stream(new NettyFrameWriter(channel.pipeline().firstContext(), d.framePrefix(),
                d.frameSuffix(), frame -> {
                    serverBytes += frame.readableBytes();
                    frame.release();
                }));
    }

    /** A session streaming deltas into one writer. */
    private final class Stream {
        private final FrameWriter writer;
        private DialectSession session;
        private int sinceReset;

        Stream(FrameWriter writer) {
            this.writer = writer;
            this.session = fresh();
        }

        private DialectSession fresh() {
            DialectSession s = d.newSession(adapter, EventSamples.CONVERSATION);
            EventSamples.prepare(s, d, Event.Kind.TEXT_DELTA, writer);
            return s;
        }

        void encode() throws IOException {
            if (++sinceReset == RESET_EVERY) {
                session = fresh();
                sinceReset = 0;
            }
            session.encode(delta, writer);
        }
    }

    /** Encodes one delta through a writer like the gateway's into one reused buffer; returns the bytes written so far. */
    public long encode() throws IOException {
        stream.encode();
        return out.bytes();
    }

    /** Encodes one delta through the gateway's own writer, each frame a buffer from the channel's pool. */
    public long encodeServerWriter() throws IOException {
        serverStream.encode();
        return serverBytes;
    }

    /** The naive baseline's bytes for the same frame. */
    public byte[] naive() throws IOException {
        return NaiveEncoding.textDelta(d, EventSamples.CONVERSATION, EventSamples.MESSAGE, EventSamples.DELTA,
                EventSamples.TIMESTAMP, counter++);
    }

    @Override
    public void close() {
        out.close();
        channel.finishAndReleaseAll();
    }
}
