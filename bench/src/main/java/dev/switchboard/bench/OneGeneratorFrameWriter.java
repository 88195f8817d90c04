package dev.switchboard.bench;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.FrameWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.PooledByteBufAllocator;

import java.io.IOException;
import java.io.OutputStream;

/**
 * A what-if, not what the gateway does: a {@link FrameWriter} that keeps one generator for all
 * its frames (flushed, not closed, at each frame's end) instead of creating one per frame, to
 * show what per-frame generator creation costs.
 */
public final class OneGeneratorFrameWriter implements FrameWriter, AutoCloseable {
    private final ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(4096);
    private final byte[] prefix;
    private final byte[] suffix;
    private final JsonGenerator generator;
    private long bytes;

    public OneGeneratorFrameWriter(Dialect dialect) throws IOException {
        this.prefix = dialect.framePrefix();
        this.suffix = dialect.frameSuffix();
        this.generator = Json.FACTORY.createGenerator((OutputStream) new ByteBufOutputStream(buf));
        this.generator.setRootValueSeparator(null);
    }

    @Override
    public JsonGenerator begin() {
        buf.clear();
        buf.writeBytes(prefix);
        return generator;
    }

    @Override
    public void end() throws IOException {
        generator.flush();
        buf.writeBytes(suffix);
        bytes += buf.readableBytes();
    }

    public long bytes() {
        return bytes;
    }

    /** The last frame, as text. */
    public String last() {
        return buf.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        generator.close();
        buf.release();
    }
}
