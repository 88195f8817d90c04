package dev.switchboard.testkit;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.FrameWriter;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** A {@link FrameWriter} for socket-free tests: keeps every frame as text. */
public final class CollectingFrameWriter implements FrameWriter {
    private final List<String> frames = new ArrayList<>();
    private ByteArrayOutputStream current;
    private JsonGenerator generator;

    @Override
    public JsonGenerator begin() throws IOException {
        if (generator != null) {
            throw new IllegalStateException("begin() twice without end()");
        }
        current = new ByteArrayOutputStream();
        generator = Json.FACTORY.createGenerator(current);
        return generator;
    }

    @Override
    public void end() throws IOException {
        if (generator == null) {
            throw new IllegalStateException("end() without begin()");
        }
        generator.close();
        frames.add(current.toString(StandardCharsets.UTF_8));
        generator = null;
        current = null;
    }

    @Override
    public void frame(byte[] json, int offset, int length) {
        if (generator != null) {
            throw new IllegalStateException("frame() inside an open frame");
        }
        frames.add(new String(json, offset, length, StandardCharsets.UTF_8));
    }

    /** Frames written so far, as text. */
    public List<String> frames() {
        return List.copyOf(frames);
    }

    /** Frames written so far, parsed. */
    public List<JsonNode> json() {
        List<JsonNode> out = new ArrayList<>();
        for (String f : frames) {
            try {
                out.add(Json.MAPPER.readTree(f));
            } catch (IOException e) {
                throw new UncheckedIOException("frame is not JSON: " + f, e);
            }
        }
        return out;
    }

    /** Forgets the frames written so far. */
    public void clear() {
        frames.clear();
    }
}
