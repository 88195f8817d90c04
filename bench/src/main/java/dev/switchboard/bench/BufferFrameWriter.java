package dev.switchboard.bench;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.FrameWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.PooledByteBufAllocator;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link FrameWriter} that writes as the gateway's does, one generator kept for every frame
 * and flushed (not closed) at each frame's end, between the frame's prefix and suffix, but into
 * one reused direct buffer, and counts what it wrote. It can also keep copies of the frames, for
 * the floor server and for checks.
 */
public final class BufferFrameWriter implements FrameWriter, AutoCloseable {
    private final ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(4096);
    private final JsonGenerator generator;
    private final byte[] prefix;
    private final byte[] suffix;
    private final List<byte[]> kept;
    private boolean open;
    private long frames;
    private long bytes;

    private BufferFrameWriter(byte[] prefix, byte[] suffix, boolean keep) {
        this.prefix = prefix;
        this.suffix = suffix;
        this.kept = keep ? new ArrayList<>() : null;
        try {
            this.generator = Json.FACTORY.createGenerator((OutputStream) new ByteBufOutputStream(buf));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.generator.setRootValueSeparator(null);
    }

    /** A writer that only counts, framing as {@code dialect} does on the wire. */
    public static BufferFrameWriter counting(Dialect dialect) {
        return new BufferFrameWriter(dialect.framePrefix(), dialect.frameSuffix(), false);
    }

    /** A writer that keeps a copy of every frame, framing as {@code dialect} does on the wire. */
    public static BufferFrameWriter keeping(Dialect dialect) {
        return new BufferFrameWriter(dialect.framePrefix(), dialect.frameSuffix(), true);
    }

    @Override
    public JsonGenerator begin() {
        if (open) {
            throw new IllegalStateException("begin() twice without end()");
        }
        open = true;
        buf.clear();
        buf.writeBytes(prefix);
        return generator;
    }

    @Override
    public void end() throws IOException {
        if (!open) {
            throw new IllegalStateException("end() without begin()");
        }
        open = false;
        generator.flush();
        buf.writeBytes(suffix);
        counted();
    }

    private void counted() {
        frames++;
        bytes += buf.readableBytes();
        if (kept != null) {
            byte[] copy = new byte[buf.readableBytes()];
            buf.getBytes(buf.readerIndex(), copy);
            kept.add(copy);
        }
    }

    @Override
    public void frame(byte[] json, int offset, int length) {
        if (open) {
            throw new IllegalStateException("frame() inside an open frame");
        }
        buf.clear();
        buf.writeBytes(prefix).writeBytes(json, offset, length).writeBytes(suffix);
        counted();
    }

    public long frames() {
        return frames;
    }

    public long bytes() {
        return bytes;
    }

    /** The frames kept so far (an empty list for a counting writer). */
    public List<byte[]> kept() {
        return kept == null ? List.of() : kept;
    }

    @Override
    public void close() {
        try {
            generator.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            buf.release();
        }
    }
}
