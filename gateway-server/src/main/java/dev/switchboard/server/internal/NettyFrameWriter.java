package dev.switchboard.server.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.FrameWriter;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.FastThreadLocal;

import java.io.IOException;
import java.io.OutputStream;
import java.util.function.Consumer;

/**
 * Writes each frame's JSON straight into a pooled buffer, between an optional prefix and
 * suffix (an SSE event's {@code data: } and blank line), and hands the finished buffer to a
 * sink that queues it on the channel (unflushed: the caller flushes once per batch). Public only
 * for the codec benchmarks, which measure the gateway's own writer.
 *
 * <p>A writer may be given its frames' buffers instead ({@link Buffers}): a sink that copies each
 * frame on where it goes then reuses two buffers for every frame rather than taking one from the
 * pool and giving it back.
 *
 * <p>The generator belongs to the thread, not the writer: every writer on an event loop shares
 * its one generator, pointed at a frame's buffer from {@link #begin()} to {@link #end()} and
 * flushed, not closed, at the end. So no frame creates a generator and no idle connection holds
 * one. A thread writes one frame at a time: an encoder writes a frame without yielding, and the
 * sink runs once the generator is free again.
 */
public final class NettyFrameWriter implements FrameWriter {
    private static final FastThreadLocal<FrameOutput> OUTPUT = new FastThreadLocal<>() {
        @Override
        protected FrameOutput initialValue() {
            return new FrameOutput();
        }
    };

    /** Room left after a frame's JSON for what its sink appends (a cursor, a chunk's CRLF). */
    private static final int TAILROOM = 32;

    private final ChannelHandlerContext ctx;
    private final int headroom;
    private byte[] prefix;
    private final byte[] suffix;
    private final Consumer<ByteBuf> sink;
    private final Buffers buffers;
    /** The frame being written and its thread's output, between begin and end. */
    private ByteBuf buf;
    private FrameOutput output;

    public NettyFrameWriter(ChannelHandlerContext ctx, byte[] prefix, byte[] suffix, Consumer<ByteBuf> sink) {
        this(ctx, 0, prefix, suffix, sink);
    }

    /**
     * With {@code headroom} bytes left free before each frame (its buffer's reader index starts
     * there), so the sink can put the transport's framing in front of it without a copy
     * ({@link WireFraming}).
     */
    public NettyFrameWriter(ChannelHandlerContext ctx, int headroom, byte[] prefix, byte[] suffix,
                            Consumer<ByteBuf> sink) {
        this(ctx, headroom, prefix, suffix, sink, null);
    }

    /** With each frame written into a buffer {@code buffers} gives (null: a new pooled buffer). */
    NettyFrameWriter(ChannelHandlerContext ctx, int headroom, byte[] prefix, byte[] suffix,
                     Consumer<ByteBuf> sink, Buffers buffers) {
        this.ctx = ctx;
        this.headroom = headroom;
        this.prefix = prefix;
        this.suffix = suffix;
        this.sink = sink;
        this.buffers = buffers;
    }

    /**
     * Where the frames of a writer are written when not into a new pooled buffer each: the sink
     * is handed a buffer it does not own, to copy before it takes the next frame.
     */
    interface Buffers {
        /** An empty buffer of at least this capacity for the next frame. */
        ByteBuf take(int capacity);
    }

    private ByteBuf newFrame(int capacity) {
        return buffers == null ? ctx.alloc().buffer(capacity) : buffers.take(capacity);
    }

    /** Gives back a frame the sink will not get: released when it was the pool's. */
    private void drop(ByteBuf frame) {
        if (buffers == null) {
            frame.release();
        }
    }

    @Override
    public JsonGenerator begin() throws IOException {
        if (buf != null) {
            throw new IllegalStateException("begin() twice without end()");
        }
        FrameOutput out = OUTPUT.get();
        if (out.target != null) {
            out = new FrameOutput();
            OUTPUT.set(out);
        }
        ByteBuf frame = newFrame(256);
        frame.setIndex(headroom, headroom).writeBytes(prefix);
        JsonGenerator generator;
        try {
            generator = out.open(frame);
        } catch (IOException | RuntimeException e) {
            drop(frame);
            throw e;
        }
        buf = frame;
        output = out;
        return generator;
    }

    @Override
    public void end() throws IOException {
        if (buf == null) {
            throw new IllegalStateException("end() without begin()");
        }
        ByteBuf frame = buf;
        FrameOutput out = output;
        buf = null;
        output = null;
        try {
            out.finish();
        } catch (IOException | RuntimeException e) {
            drop(frame);
            throw e;
        }
        sink.accept(frame.writeBytes(suffix));
    }

    @Override
    public void frame(byte[] json, int offset, int length) {
        if (buf != null) {
            throw new IllegalStateException("frame() inside an open frame");
        }
        ByteBuf frame = newFrame(headroom + prefix.length + length + suffix.length + TAILROOM);
        frame.setIndex(headroom, headroom);
        sink.accept(frame.writeBytes(prefix).writeBytes(json, offset, length).writeBytes(suffix));
    }

    /** Sets the bytes written before each following frame. */
    void prefix(byte[] prefix) {
        this.prefix = prefix;
    }

    /**
     * Releases a frame left half-written by an encoder that failed. Whatever the encoder left in
     * the generator goes with it: the thread's next frame gets a fresh generator.
     */
    void abort() {
        if (buf != null) {
            drop(buf);
            buf = null;
            output = null;
        }
    }

    /**
     * A thread's generator and the stream under it, which writes into the open frame's buffer.
     * A frame that was begun and not ended (aborted, failed at its end, or left open) keeps its
     * output, with whatever it wrote; the thread's next frame, of any writer, gets a new one. So a
     * broken frame costs that frame only, never the frames of the thread's other connections.
     */
    private static final class FrameOutput extends OutputStream {
        private JsonGenerator generator;
        /** The open frame's buffer; null between frames. */
        private ByteBuf target;

        JsonGenerator open(ByteBuf frame) throws IOException {
            if (generator == null) {
                generator = Json.FACTORY.createGenerator(this);
                // One document per frame: no separator between the root values of successive frames.
                generator.setRootValueSeparator(null);
            }
            target = frame;
            return generator;
        }

        /** Moves the frame's JSON from the generator's buffer into the frame. */
        void finish() throws IOException {
            if (!generator.getOutputContext().inRoot()) {
                throw new IllegalStateException("a frame ended inside an unfinished JSON value");
            }
            generator.flush();
            target = null;
        }

        @Override
        public void write(int b) {
            target.writeByte(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            target.writeBytes(b, off, len);
        }
    }
}
