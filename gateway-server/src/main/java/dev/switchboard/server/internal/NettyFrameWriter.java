package dev.switchboard.server.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.FrameWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;

import java.io.IOException;

/**
 * Writes each frame's JSON straight into a pooled buffer and queues it on the channel as a
 * text WebSocket frame (not flushed: the caller flushes once per batch).
 */
final class NettyFrameWriter implements FrameWriter {
    private final ChannelHandlerContext ctx;
    private ByteBuf buf;
    private JsonGenerator generator;
    private int written;

    NettyFrameWriter(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public JsonGenerator begin() throws IOException {
        if (generator != null) {
            throw new IllegalStateException("begin() twice without end()");
        }
        buf = ctx.alloc().buffer(256);
        generator = Json.FACTORY.createGenerator((java.io.OutputStream) new ByteBufOutputStream(buf));
        return generator;
    }

    @Override
    public void end() throws IOException {
        if (generator == null) {
            throw new IllegalStateException("end() without begin()");
        }
        generator.close();
        ByteBuf frame = buf;
        generator = null;
        buf = null;
        written++;
        ctx.write(new TextWebSocketFrame(frame), ctx.voidPromise());
    }

    /** Releases a frame left half-written by an encoder that failed. */
    void abort() {
        if (buf != null) {
            buf.release();
            buf = null;
            generator = null;
        }
    }

    /** Frames written since the last call, and resets the count. */
    int takeWritten() {
        int n = written;
        written = 0;
        return n;
    }
}
