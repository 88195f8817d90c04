package dev.switchboard.adapter.hai;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.Json;
import dev.switchboard.core.Principal;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.testing.CollectingFrameWriter;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** Fixtures and a session under test that collects every frame it writes. */
final class HaiTesting {
    private final DialectSession session;
    private final CollectingFrameWriter out = new CollectingFrameWriter();
    private long seq;

    HaiTesting() {
        this(AdapterContext.defaults());
    }

    HaiTesting(AdapterContext context) {
        session = new HaiAdapter(context).newSession(
                new SessionContext("conn-1", Principal.ANONYMOUS, "/ws", Map.of()));
    }

    DialectSession session() {
        return session;
    }

    /** Encodes these events of one run and returns the frames they produced, parsed. */
    List<JsonNode> encode(String conversationId, String runId, Event... events) {
        out.clear();
        try {
            for (Event event : events) {
                session.encode(new Envelope(conversationId, runId, ++seq, 1_700_000_000_000L + seq, event), out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.json();
    }

    static String fixture(String name) {
        try (InputStream in = HaiTesting.class.getResourceAsStream("/fixtures/" + name)) {
            if (in == null) {
                throw new IllegalArgumentException("no fixture " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static JsonNode fixtureJson(String name) {
        try {
            return Json.MAPPER.readTree(fixture(name));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static JsonNode json(String text) {
        try {
            return Json.MAPPER.readTree(text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
