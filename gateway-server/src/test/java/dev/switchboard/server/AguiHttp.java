package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Json;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code POST /agui} from a test: a RunAgentInput in, the server-sent events read whole. */
final class AguiHttp {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private AguiHttp() {
    }

    /** A RunAgentInput on a thread with one new user message. */
    static ObjectNode input(String threadId, String text) {
        ObjectNode in = Json.object().put("threadId", threadId).put("runId", UUID.randomUUID().toString());
        in.putArray("messages").addObject().put("id", UUID.randomUUID().toString()).put("role", "user")
                .put("content", text);
        return in;
    }

    /** Posts the input and returns its events; the answer must be a 200 event stream. */
    static List<JsonNode> run(int port, JsonNode input, String... headers) {
        try {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/agui"))
                    .header("Content-Type", "application/json").header("Accept", "text/event-stream")
                    .timeout(Duration.ofSeconds(20))
                    .POST(HttpRequest.BodyPublishers.ofString(input.toString()));
            if (headers.length > 0) {
                b.headers(headers);
            }
            HttpResponse<String> res = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
            assertThat(res.statusCode()).as(res.body()).isEqualTo(200);
            return events(res.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * The events of an SSE body, checked: LF only; each event an {@code id: <seq>} line (the
     * resume cursor, never going back) and one {@code data:} line, or a data line alone.
     */
    static List<JsonNode> events(String body) throws IOException {
        assertThat(body).doesNotContain("\r");
        List<JsonNode> events = new ArrayList<>();
        long lastId = 0;
        for (String block : body.split("\n\n")) {
            if (block.isEmpty()) {
                continue;
            }
            List<String> lines = block.lines().toList();
            String data = lines.get(lines.size() - 1);
            assertThat(data).startsWith("data: ");
            if (lines.size() == 2) {
                assertThat(lines.get(0)).matches("id: \\d+");
                long id = Long.parseLong(lines.get(0).substring(4));
                assertThat(id).as("ids never go back").isGreaterThanOrEqualTo(lastId);
                lastId = id;
            } else {
                assertThat(lines).hasSize(1);
            }
            events.add(Json.MAPPER.readTree(data.substring("data: ".length())));
        }
        return events;
    }

    static List<String> types(List<JsonNode> events) {
        return events.stream().map(e -> e.path("type").asText()).toList();
    }

    static JsonNode first(List<JsonNode> events, String type) {
        return events.stream().filter(e -> e.path("type").asText().equals(type)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + type + " in " + events));
    }

    static JsonNode last(List<JsonNode> events) {
        return events.get(events.size() - 1);
    }

    static String text(List<JsonNode> events) {
        StringBuilder sb = new StringBuilder();
        events.stream().filter(e -> e.path("type").asText().equals("TEXT_MESSAGE_CONTENT"))
                .forEach(e -> sb.append(e.path("delta").asText()));
        return sb.toString();
    }
}
