package dev.switchboard.server.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.FrameWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.channel.ChannelHandlerContext;

import java.io.IOException;
import java.io.OutputStream;
import java.util.function.Consumer;

/**
 * Writes each frame's JSON straight into a pooled buffer, between an optional prefix and
 * suffix (an SSE event's {@code data: } and blank line), and hands the finished buffer to a
 * sink that queues it on the channel (unflushed: the caller flushes once per batch). Public only
 * for the codec benchmarks, which measure the gateway's own writer.
 */
public final class NettyFrameWriter implements FrameWriter {
    private final ChannelHandlerContext ctx;
    private byte[] prefix;
    private final byte[] suffix;
    private final Consumer<ByteBuf> sink;
    private ByteBuf buf;
    private JsonGenerator generator;

    public NettyFrameWriter(ChannelHandlerContext ctx, byte[] prefix, byte[] suffix, Consumer<ByteBuf> sink) {
        this.ctx = ctx;
        this.prefix = prefix;
        this.suffix = suffix;
        this.sink = sink;
    }

    @Override
    public JsonGenerator begin() throws IOException {
        if (generator != null) {
            throw new IllegalStateException("begin() twice without end()");
        }
        buf = ctx.alloc().buffer(256);
        buf.writeBytes(prefix);
        generator = Json.FACTORY.createGenerator((OutputStream) new ByteBufOutputStream(buf));
        return generator;
    }

    @Override
    public void end() throws IOException {
        if (generator == null) {
            throw new IllegalStateException("end() without begin()");
        }
        generator.close();
        ByteBuf frame = buf.writeBytes(suffix);
        generator = null;
        buf = null;
        sink.accept(frame);
    }

    /** Sets the bytes written before each following frame. */
    void prefix(byte[] prefix) {
        this.prefix = prefix;
    }

    /** Releases a frame left half-written by an encoder that failed. */
    void abort() {
        if (buf != null) {
            buf.release();
            buf = null;
            generator = null;
        }
    }
}
