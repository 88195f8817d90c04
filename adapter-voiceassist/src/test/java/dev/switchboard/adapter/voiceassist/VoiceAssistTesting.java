package dev.switchboard.adapter.voiceassist;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.testing.CollectingFrameWriter;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** Fixtures, and a session under test that collects every frame it writes. */
final class VoiceAssistTesting {
    /** The spec's example client id and conversation id. */
    static final String CLIENT_ID = "c550e8400-e29b-41d4-a716-446655440000";
    static final String CONVERSATION = "550e8400-e29b-41d4-a716-446655440000";
    /** The time of every spec example, read by sessions under test and stamped on every envelope. */
    static final long NOW = Instant.parse("2025-11-22T12:34:56.789Z").toEpochMilli();
    static final Pattern TIMESTAMP = Pattern.compile("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z$");

    private final DialectSession session;
    private final CollectingFrameWriter out = new CollectingFrameWriter();
    private long seq;

    VoiceAssistTesting() {
        this(AdapterContext.defaults(), CONVERSATION);
    }

    VoiceAssistTesting(AdapterContext context, String urlConversationId) {
        session = new VoiceAssistSession(CLIENT_ID, urlConversationId, context.maxContentChars(), () -> NOW);
    }

    DialectSession session() {
        return session;
    }

    Decoded decode(String text) {
        return session.decode(text);
    }

    /** Encodes these events of one run of the URL's conversation, stamped {@link #NOW}. */
    List<JsonNode> encode(String runId, Event... events) {
        return collect(() -> {
            for (Event event : events) {
                session.encode(new Envelope(CONVERSATION, runId, ++seq, NOW, event), out);
            }
        });
    }

    /** Encodes one event stamped with this time. */
    List<JsonNode> encodeAt(long timestamp, String runId, Event event) {
        return collect(() -> session.encode(new Envelope(CONVERSATION, runId, ++seq, timestamp, event), out));
    }

    List<JsonNode> encodeError(GatewayError error) {
        return collect(() -> session.encodeError(error, out));
    }

    List<JsonNode> opened() {
        return collect(() -> session.opened(out));
    }

    List<JsonNode> pong() {
        return collect(() -> session.pong(out));
    }

    /** The frames written by an action, parsed; each has a well-formed timestamp if it has one at all. */
    private List<JsonNode> collect(IoAction action) {
        out.clear();
        try {
            action.run();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<JsonNode> frames = out.json();
        assertThat(frames).allSatisfy(VoiceAssistTesting::assertTimestampWellFormed);
        return frames;
    }

    static void assertTimestampWellFormed(JsonNode frame) {
        if (frame.has("timestamp")) {
            assertThat(frame.get("timestamp").textValue()).as("timestamp of %s", frame).matches(TIMESTAMP);
        }
    }

    private interface IoAction {
        void run() throws IOException;
    }

    static String fixture(String name) {
        try (InputStream in = VoiceAssistTesting.class.getResourceAsStream("/fixtures/" + name)) {
            if (in == null) {
                throw new IllegalArgumentException("no fixture " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static JsonNode fixtureJson(String name) {
        return json(fixture(name));
    }

    static JsonNode json(String text) {
        try {
            return Json.MAPPER.readTree(text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
