package dev.switchboard.core.spi;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Where a dialect session writes outbound text frames: {@link #begin()} opens a frame and
 * returns a generator writing straight into it, {@link #end()} closes the frame.
 * One event may produce any number of frames, each one JSON document.
 */
public interface FrameWriter {
    /** Opens a new frame. The generator is valid until {@link #end()}. */
    JsonGenerator begin() throws IOException;

    /** Closes the frame opened by the last {@link #begin()} and queues it for sending. */
    void end() throws IOException;

    /**
     * Queues {@code length} bytes of {@code json} from {@code offset}, one whole JSON document
     * (UTF-8), as a frame of its own: what {@link JsonFrame#writeTo} calls. The bytes are copied
     * before this returns. This default writes them through {@link #begin()}; a writer that can
     * copy them straight into its frame should.
     */
    default void frame(byte[] json, int offset, int length) throws IOException {
        JsonGenerator generator = begin();
        generator.writeRaw(new String(json, offset, length, StandardCharsets.UTF_8));
        end();
    }

    /**
     * A writer that sends nothing: for bringing a session's state up to events its client was
     * shown before (see {@link dev.switchboard.core.Subscriber#prime}).
     */
    static FrameWriter discarding() {
        return new FrameWriter() {
            private JsonGenerator generator;

            @Override
            public JsonGenerator begin() throws IOException {
                generator = dev.switchboard.core.Json.FACTORY.createGenerator(java.io.OutputStream.nullOutputStream());
                return generator;
            }

            @Override
            public void end() throws IOException {
                generator.close();
                generator = null;
            }

            @Override
            public void frame(byte[] json, int offset, int length) {
            }
        };
    }
}
