package dev.switchboard.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.DialectSession;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A dialect session (or HTTP exchange) under test, without a socket: it decodes text, encodes
 * events in envelopes it numbers and stamps itself, and returns the frames each call wrote,
 * parsed. A dialect's test helper may extend it to check every frame ({@link #checkFrame}).
 *
 * @param <S> the session's type, so a test can reach what its dialect adds
 */
public class EmbeddedSession<S extends DialectSession> {
    private final S session;
    private final long stepMillis;
    private final CollectingFrameWriter out = new CollectingFrameWriter();
    private final List<String> written = new ArrayList<>();
    private long seq;
    private long timestamp;

    /**
     * A session whose encoded envelopes are numbered 1, 2, 3… and stamped {@code startMillis +
     * stepMillis}, then {@code stepMillis} later each (a step of 0 stamps every one {@code startMillis}).
     */
    public EmbeddedSession(S session, long startMillis, long stepMillis) {
        this.session = Objects.requireNonNull(session, "session");
        this.timestamp = startMillis;
        this.stepMillis = stepMillis;
    }

    public S session() {
        return session;
    }

    public Decoded decode(String text) {
        return session.decode(text);
    }

    /** Encodes these events of one run and returns the frames they produced, parsed. */
    public List<JsonNode> encode(String conversationId, String runId, Event... events) {
        return collect(() -> {
            for (Event event : events) {
                timestamp += stepMillis;
                session.encode(new Envelope(conversationId, runId, ++seq, timestamp, event), out);
            }
        });
    }

    /** Encodes one event stamped with this time, which leaves the stamps of later events as they were. */
    public List<JsonNode> encodeAt(long at, String conversationId, String runId, Event event) {
        return collect(() -> session.encode(new Envelope(conversationId, runId, ++seq, at, event), out));
    }

    /** Encodes an error answered to this connection alone and returns the frames it produced, parsed. */
    public List<JsonNode> encodeError(GatewayError error) {
        return collect(() -> session.encodeError(error, out));
    }

    /** The frames the session sends as soon as its connection is open, parsed. */
    public List<JsonNode> opened() {
        return collect(() -> session.opened(out));
    }

    /** The session's answer to a ping, parsed. */
    public List<JsonNode> pong() {
        return collect(() -> session.pong(out));
    }

    /** Every frame written so far, as text, in order. */
    public List<String> written() {
        return List.copyOf(written);
    }

    /** Checks one frame the session wrote; nothing by default. */
    protected void checkFrame(JsonNode frame) {
    }

    private List<JsonNode> collect(IoAction action) {
        out.clear();
        try {
            action.run();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        written.addAll(out.frames());
        List<JsonNode> frames = out.json();
        frames.forEach(this::checkFrame);
        return frames;
    }

    private interface IoAction {
        void run() throws IOException;
    }
}
