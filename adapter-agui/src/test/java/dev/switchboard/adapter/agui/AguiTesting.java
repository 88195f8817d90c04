package dev.switchboard.adapter.agui;

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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Fixtures, and a WebSocket session or HTTP exchange under test that collects every frame it writes. */
final class AguiTesting {
    /** The clock sessions under test read for errors, which have no envelope to take a time from. */
    static final long NOW = 1_705_318_209_999L;

    private final DialectSession session;
    private final CollectingFrameWriter out = new CollectingFrameWriter();
    private long seq;
    private long timestamp = 1_705_318_200_000L;

    private AguiTesting(DialectSession session) {
        this.session = session;
    }

    /** An AGORA WebSocket session. */
    static AguiTesting ws() {
        return ws(AdapterContext.defaults());
    }

    static AguiTesting ws(AdapterContext context) {
        return new AguiTesting(new AguiWsSession(context.maxContentChars(), () -> NOW));
    }

    /** An official 1.0 HTTP exchange. */
    static AguiTesting http() {
        return http(AdapterContext.defaults());
    }

    static AguiTesting http(AdapterContext context) {
        return new AguiTesting(new AguiHttpExchange(context.maxContentChars(), () -> NOW));
    }

    DialectSession session() {
        return session;
    }

    AguiHttpExchange exchange() {
        return (AguiHttpExchange) session;
    }

    Decoded decode(String text) {
        return session.decode(text);
    }

    /** Encodes these events of one run, 100 ms apart, and returns the frames they produced, parsed. */
    List<JsonNode> encode(String conversationId, String runId, Event... events) {
        out.clear();
        try {
            for (Event event : events) {
                timestamp += 100;
                session.encode(new Envelope(conversationId, runId, ++seq, timestamp, event), out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.json();
    }

    /** Encodes one event with this timestamp. */
    List<JsonNode> encodeAt(long at, String conversationId, String runId, Event event) {
        out.clear();
        try {
            session.encode(new Envelope(conversationId, runId, ++seq, at, event), out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.json();
    }

    /** Encodes an error answered to this connection and returns the frames it produced, parsed. */
    List<JsonNode> encodeError(GatewayError error) {
        out.clear();
        try {
            session.encodeError(error, out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.json();
    }

    /**
     * The first {@code calls} (up to 3) model calls of a run against a local server (vLLM, Ollama,
     * llama.cpp), which reports no reasoning or cached-token counts: 20/7, 12/6 and 9/4 tokens.
     */
    static Event.Usage[] callsWithoutTokenDetails(int calls) {
        Event.Usage[] all = {new Event.Usage("local", 20, 7, null, null), new Event.Usage("local", 12, 6, null, null),
                new Event.Usage("local", 9, 4, null, null)};
        return Arrays.copyOf(all, calls);
    }

    /** Each frame's type, with the step name, custom event name or outcome type where there is one. */
    static List<String> types(List<JsonNode> frames) {
        List<String> out = new ArrayList<>();
        for (JsonNode f : frames) {
            String type = f.path("type").asText();
            if (f.has("stepName")) {
                type += ":" + f.get("stepName").textValue();
            } else if (type.equals("CUSTOM")) {
                type += ":" + f.get("name").textValue();
            } else if (f.has("outcome")) {
                type += ":" + f.get("outcome").get("type").textValue();
            } else if (type.equals("STATE_SNAPSHOT") && f.get("snapshot").has("status")) {
                type += ":" + f.get("snapshot").get("status").textValue();
            }
            out.add(type);
        }
        return out;
    }

    /**
     * Checks what every AG-UI frame must be: an object whose {@code type} is a string, with an integer
     * {@code timestamp}, and not one {@code null} anywhere (absent optional fields are left out).
     */
    static void assertWellFormed(List<JsonNode> frames) {
        assertThat(frames).allSatisfy(f -> {
            assertThat(f.isObject()).as("frame %s", f).isTrue();
            assertThat(f.path("type").isTextual()).as("type of %s", f).isTrue();
            assertThat(f.path("timestamp").isIntegralNumber()).as("timestamp of %s", f).isTrue();
            assertThat(f.path("timestamp").canConvertToLong()).as("timestamp of %s", f).isTrue();
            assertThat(nulls(f, "")).as("null values in %s", f).isEmpty();
        });
    }

    private static List<String> nulls(JsonNode node, String at) {
        List<String> found = new ArrayList<>();
        if (node.isNull()) {
            found.add(at.isEmpty() ? "(root)" : at);
        } else if (node.isObject()) {
            for (Map.Entry<String, JsonNode> field : node.properties()) {
                found.addAll(nulls(field.getValue(), at + "/" + field.getKey()));
            }
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                found.addAll(nulls(node.get(i), at + "/" + i));
            }
        }
        return found;
    }

    static String fixture(String name) {
        try (InputStream in = AguiTesting.class.getResourceAsStream("/fixtures/" + name)) {
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
