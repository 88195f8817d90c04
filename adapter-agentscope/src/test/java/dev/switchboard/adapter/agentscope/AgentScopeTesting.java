package dev.switchboard.adapter.agentscope;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Command;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.testkit.EmbeddedSession;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static dev.switchboard.testkit.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An exchange under test that keeps every frame it writes (envelopes stamped 100 ms apart), the
 * reference client's reading of a server-sent event stream, and checks of its events.
 */
final class AgentScopeTesting extends EmbeddedSession<AgentScopeExchange> {
    /** The clock the exchange reads for errors, which have no envelope to take a time from. */
    static final long NOW = 1_705_318_209_999L;
    /** The first envelope's timestamp is this plus 100 ms. */
    static final long START = 1_705_318_200_000L;

    AgentScopeTesting() {
        this(AdapterContext.defaults());
    }

    AgentScopeTesting(AdapterContext context) {
        super(new AgentScopeExchange(context.maxContentChars(), () -> NOW), START, 100);
    }

    AgentScopeExchange exchange() {
        return session();
    }

    /** The run id of the StartRun a decoded request produced. */
    static String runId(Decoded decoded) {
        return ((Command.StartRun) ((Decoded.Commands) decoded).commands().get(0)).runId();
    }

    /** Every frame written so far as the gateway sends a stream: {@code data: <frame>} and a blank line each. */
    String sse() {
        StringBuilder body = new StringBuilder();
        for (String frame : written()) {
            body.append("data: ").append(frame).append("\n\n");
        }
        return body.toString();
    }

    /** Every frame written so far, read back from {@link #sse()} as the reference client reads it. */
    List<JsonNode> events() {
        return readLikeTheReferenceClient(sse());
    }

    /**
     * The reference Python client's reading of a stream: each line that starts with {@code data: }
     * (with the space) is one JSON event; every other line is dropped.
     */
    static List<JsonNode> readLikeTheReferenceClient(String body) {
        List<JsonNode> events = new ArrayList<>();
        for (String line : body.split("\n", -1)) {
            if (line.startsWith("data: ")) {
                events.add(json(line.substring("data: ".length())));
            }
        }
        return events;
    }

    /** Each event as {@code object:status}, with the message or content type where there is one. */
    static List<String> shapes(List<JsonNode> events) {
        List<String> out = new ArrayList<>();
        for (JsonNode e : events) {
            String object = e.path("object").asText();
            String shape = switch (object) {
                case "message" -> "message(" + e.get("type").textValue() + "):" + e.get("status").textValue();
                case "content" -> "content(" + e.get("type").textValue() + (e.get("delta").booleanValue() ? ",delta" : "")
                        + "):" + e.get("status").textValue();
                default -> object + ":" + e.path("status").asText();
            };
            out.add(shape);
        }
        return out;
    }

    private static final Set<String> EVENT_KEYS = Set.of("sequence_number", "object", "status", "error");
    private static final Set<String> RESPONSE_KEYS = Set.of("id", "created_at", "completed_at", "output", "usage",
            "session_id");
    private static final Set<String> MESSAGE_KEYS = Set.of("id", "type", "role", "content", "code", "message",
            "usage", "metadata");
    private static final Set<String> CONTENT_KEYS = Set.of("type", "index", "delta", "msg_id");

    /**
     * Checks what the reference client may rely on in every event: the keys of its model with values
     * of its types, and {@code sequence_number} 0, 1, 2… without a gap, ending with one final
     * {@code response}.
     */
    static void assertWellFormedStream(List<JsonNode> events) {
        assertThat(events).isNotEmpty();
        for (int i = 0; i < events.size(); i++) {
            JsonNode e = events.get(i);
            assertThat(e.path("sequence_number").isInt()).as("sequence_number of %s", e).isTrue();
            assertThat(e.get("sequence_number").intValue()).as("sequence_number of event %d", i).isEqualTo(i);
            assertWellFormed(e);
        }
        JsonNode last = events.get(events.size() - 1);
        assertThat(last.get("object").textValue()).isEqualTo("response");
        assertThat(last.get("status").textValue()).isIn("completed", "failed", "canceled");
        assertThat(events.subList(0, events.size() - 1))
                .filteredOn(e -> e.get("object").textValue().equals("response"))
                .allSatisfy(e -> assertThat(e.get("completed_at").isNull()).as("an early response %s", e).isTrue());
    }

    /** Checks one event's (or nested object's) keys and value types against its reference model. */
    static void assertWellFormed(JsonNode e) {
        assertThat(e.isObject()).as("%s", e).isTrue();
        assertThat(e.path("sequence_number").isInt() || e.path("sequence_number").isNull()).as("%s", e).isTrue();
        assertThat(e.path("status").isTextual()).as("status of %s", e).isTrue();
        assertThat(e.has("error")).as("error of %s", e).isTrue();
        if (!e.get("error").isNull()) {
            assertThat(e.get("error").path("code").isTextual()).isTrue();
            assertThat(e.get("error").path("message").isTextual()).isTrue();
        }
        switch (e.path("object").asText()) {
            case "response" -> {
                assertThat(fieldNames(e)).containsExactlyInAnyOrderElementsOf(union(EVENT_KEYS, RESPONSE_KEYS));
                assertThat(e.get("id").isTextual()).isTrue();
                assertThat(e.get("created_at").isIntegralNumber()).isTrue();
                assertThat(e.get("completed_at").isIntegralNumber() || e.get("completed_at").isNull()).isTrue();
                assertThat(e.get("session_id").isTextual()).isTrue();
                assertThat(e.get("output").isArray() || e.get("output").isNull()).isTrue();
                if (e.get("output").isArray()) {
                    e.get("output").forEach(AgentScopeTesting::assertWellFormed);
                }
            }
            case "message" -> {
                assertThat(fieldNames(e)).containsExactlyInAnyOrderElementsOf(union(EVENT_KEYS, MESSAGE_KEYS));
                assertThat(e.get("id").isTextual()).isTrue();
                assertThat(e.get("type").isTextual()).isTrue();
                assertThat(e.get("role").textValue()).isIn("user", "assistant", "system", "tool");
                assertThat(e.get("content").isArray() || e.get("content").isNull()).isTrue();
                if (e.get("content").isArray()) {
                    e.get("content").forEach(AgentScopeTesting::assertWellFormed);
                }
            }
            case "content" -> {
                String type = e.path("type").asText();
                String payload = switch (type) {
                    case "text" -> "text";
                    case "data" -> "data";
                    default -> throw new AssertionError("unexpected content type in " + e);
                };
                assertThat(fieldNames(e)).containsExactlyInAnyOrderElementsOf(
                        union(union(EVENT_KEYS, CONTENT_KEYS), Set.of(payload)));
                assertThat(e.get("index").isInt()).isTrue();
                assertThat(e.get("delta").isBoolean()).isTrue();
                assertThat(e.get("msg_id").isTextual()).isTrue();
                assertThat(type.equals("text") ? e.get("text").isTextual() : e.get("data").isObject()).isTrue();
            }
            default -> throw new AssertionError("unknown object in " + e);
        }
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new HashSet<>(a);
        all.addAll(b);
        return all;
    }
}
