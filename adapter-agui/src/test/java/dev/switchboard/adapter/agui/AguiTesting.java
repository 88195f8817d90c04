package dev.switchboard.adapter.agui;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Event;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.testkit.EmbeddedSession;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebSocket session or HTTP exchange under test that keeps every frame it writes (envelopes
 * stamped 100 ms apart), and checks of what every AG-UI frame must be.
 */
final class AguiTesting extends EmbeddedSession<DialectSession> {
    /** The clock sessions under test read for errors, which have no envelope to take a time from. */
    static final long NOW = 1_705_318_209_999L;

    private AguiTesting(DialectSession session) {
        super(session, 1_705_318_200_000L, 100);
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

    AguiHttpExchange exchange() {
        return (AguiHttpExchange) session();
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
}
