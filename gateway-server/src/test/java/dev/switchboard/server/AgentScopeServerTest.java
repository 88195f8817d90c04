package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Json;
import dev.switchboard.core.Role;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The AgentScope Agent API on {@code POST /process}, over real HTTP, read as the reference client reads it. */
class AgentScopeServerTest {
    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension();
    static final HttpClient HTTP = HttpClient.newHttpClient();

    static ObjectNode request(String session, String text) {
        ObjectNode req = Json.object();
        if (session != null) {
            req.put("session_id", session);
        }
        req.putArray("input").addObject().put("role", "user").put("type", "message")
                .putArray("content").addObject().put("type", "text").put("text", text);
        return req;
    }

    static HttpResponse<String> post(String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/process"))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(20))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The reference client's rule: only lines that start with {@code data: } carry events. */
    static List<JsonNode> events(HttpResponse<String> res) throws Exception {
        assertThat(res.statusCode()).as(res.body()).isEqualTo(200);
        assertThat(res.headers().firstValue("content-type").orElse("")).startsWith("text/event-stream");
        List<JsonNode> out = new ArrayList<>();
        for (String line : res.body().split("\n")) {
            if (line.startsWith("data: ")) {
                out.add(Json.MAPPER.readTree(line.substring("data: ".length())));
            }
        }
        for (int i = 0; i < out.size(); i++) {
            assertThat(out.get(i).path("sequence_number").asInt()).as("sequence_number of event " + i).isEqualTo(i);
            assertThat(out.get(i).path("object").asText()).isIn("response", "message", "content");
            assertThat(out.get(i).has("status")).isTrue();
        }
        JsonNode last = out.get(out.size() - 1);
        assertThat(last.path("object").asText()).as("the stream ends with the response").isEqualTo("response");
        return out;
    }

    static String text(List<JsonNode> events) {
        StringBuilder sb = new StringBuilder();
        events.stream().filter(e -> e.path("object").asText().equals("content") && e.path("delta").asBoolean())
                .forEach(e -> sb.append(e.path("text").asText()));
        return sb.toString();
    }

    static List<JsonNode> messages(List<JsonNode> events, String type) {
        return events.stream().filter(e -> e.path("object").asText().equals("message")
                && e.path("type").asText().equals(type) && e.path("status").asText().equals("completed")).toList();
    }

    @Test
    void basicRunFollowsTheLifecycleInOrder() throws Exception {
        List<JsonNode> events = events(post(request(null, "What are the storage rules?").toString()));
        assertThat(events.get(0).path("object").asText()).isEqualTo("response");
        assertThat(events.get(0).path("status").asText()).isEqualTo("created");
        assertThat(events.get(1).path("status").asText()).isEqualTo("in_progress");
        String session = events.get(0).path("session_id").asText();
        assertThat(session).isNotEmpty();
        List<String> shape = events.stream().map(e -> e.path("object").asText() + ":" + e.path("status").asText()).toList();
        assertThat(shape).containsSubsequence("response:created", "response:in_progress", "message:created",
                "content:in_progress", "content:completed", "message:completed", "response:completed");
        JsonNode done = events.get(events.size() - 1);
        assertThat(done.path("completed_at").isNumber()).isTrue();
        assertThat(done.path("output").isArray()).isTrue();
        JsonNode full = events.stream().filter(e -> e.path("object").asText().equals("content")
                && e.path("status").asText().equals("completed")).findFirst().orElseThrow();
        assertThat(full.path("delta").asBoolean()).isFalse();
        assertThat(full.path("text").asText()).isEqualTo(text(events));
        assertThat(text(events)).contains("chilled food");
    }

    @Test
    void aBareStringInputIsAnsweredAsOneUserMessage() throws Exception {
        String session = UUID.randomUUID().toString();
        List<JsonNode> events = events(post("{\"input\": \"What are the storage rules?\", \"session_id\": \""
                + session + "\"}"));

        assertThat(text(events)).contains("chilled food");
        assertThat(events.get(events.size() - 1).path("status").asText()).isEqualTo("completed");
        // A client may see events before they are stored: wait for the store before reading it.
        gateway.server().hub().flushed().get();
        assertThat(gateway.server().hub().store().messages(session).get(0)).satisfies(m -> {
            assertThat(m.role()).isEqualTo(Role.USER);
            assertThat(m.content()).isEqualTo("What are the storage rules?");
        });
    }

    @Test
    void searchStreamsAFunctionCallAndItsOutput() throws Exception {
        List<JsonNode> events = events(post(request(null, "search restaurant rules").toString()));
        JsonNode call = messages(events, "function_call").get(0);
        JsonNode data = call.path("content").get(0).path("data");
        assertThat(data.path("name").asText()).isEqualTo("search_regulations");
        assertThat(Json.MAPPER.readTree(data.path("arguments").asText()).path("query").asText())
                .isEqualTo("search restaurant rules");
        JsonNode output = messages(events, "function_call_output").get(0);
        assertThat(output.path("role").asText()).isEqualTo("tool");
        assertThat(output.path("content").get(0).path("data").path("call_id").asText()).isEqualTo(data.path("call_id").asText());
        assertThat(output.path("content").get(0).path("data").path("output").asText()).isEqualTo("Found 5 relevant regulations");
    }

    private static String approvalId(String session) throws Exception {
        List<JsonNode> first = events(post(request(session, "generate the report").toString()));
        JsonNode approval = messages(first, "mcp_approval_request").get(0);
        JsonNode data = approval.path("content").get(0).path("data");
        assertThat(data.path("name").asText()).isEqualTo("generate_inspection_report");
        assertThat(data.has("server_label")).isTrue();
        return data.path("id").asText();
    }

    private static ObjectNode decision(String session, String approvalId, boolean approve) {
        ObjectNode req = Json.object().put("session_id", session);
        req.putArray("input").addObject().put("role", "user").put("type", "mcp_approval_response")
                .putArray("content").addObject().put("type", "data").putObject("data")
                .put("approval_request_id", approvalId).put("approve", approve).put("reason", "checked");
        return req;
    }

    @Test
    void anApprovedReportContinuesInTheDecisionsStream() throws Exception {
        String session = UUID.randomUUID().toString();
        String id = approvalId(session);
        List<JsonNode> rest = events(post(decision(session, id, true).toString()));
        assertThat(rest.get(0).path("status").asText()).isEqualTo("created");
        assertThat(messages(rest, "function_call")).isNotEmpty();
        assertThat(text(rest)).contains("was generated");
        assertThat(rest.get(rest.size() - 1).path("status").asText()).isEqualTo("completed");
    }

    @Test
    void aRejectedReportRunsNoTool() throws Exception {
        String session = UUID.randomUUID().toString();
        List<JsonNode> rest = events(post(decision(session, approvalId(session), false).toString()));
        assertThat(messages(rest, "function_call")).isEmpty();
        assertThat(text(rest)).contains("not generated");
    }

    @Test
    void aDecisionForAnUnknownOrForeignRequestIsAClearError() throws Exception {
        HttpResponse<String> unknown = post(decision(UUID.randomUUID().toString(), "appr_nope", true).toString());
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(Json.MAPPER.readTree(unknown.body()).path("error").path("message").asText()).contains("appr_nope");
        String session = UUID.randomUUID().toString();
        String id = approvalId(session);
        HttpResponse<String> foreign = post(decision(UUID.randomUUID().toString(), id, true).toString());
        assertThat(foreign.statusCode()).isEqualTo(403);
        events(post(decision(session, id, false).toString()));
    }

    @Test
    void aCrashEndsWithAFailedResponseCarryingTheError() throws Exception {
        List<JsonNode> events = events(post(request(null, "crash").toString()));
        JsonNode last = events.get(events.size() - 1);
        assertThat(last.path("status").asText()).isEqualTo("failed");
        assertThat(last.path("error").path("code").asText()).isEqualTo("internal_error");
        assertThat(last.path("error").path("message").asText()).isNotEmpty();
    }

    @Test
    void historyCountsEarlierUserMessagesOfTheSession() throws Exception {
        String session = UUID.randomUUID().toString();
        events(post(request(session, "one").toString()));
        events(post(request(session, "two").toString()));
        assertThat(text(events(post(request(session, "history").toString())))).contains("2 earlier messages");
    }

    @Test
    void aClientThatDisconnectsMidStreamCancelsNothingAndLosesNothing() throws Exception {
        String session = UUID.randomUUID().toString();
        byte[] body = request(session, "slow please").toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", gateway.port())) {
            socket.getOutputStream().write(("POST /process HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + body.length + "\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            socket.getOutputStream().write(body);
            socket.getOutputStream().flush();
            var in = new java.io.BufferedReader(new java.io.InputStreamReader(socket.getInputStream(),
                    java.nio.charset.StandardCharsets.UTF_8));
            int deltas = 0;
            for (String line; deltas < 2 && (line = in.readLine()) != null; ) {
                if (line.startsWith("data: ") && line.contains("\"delta\":true")) {
                    deltas++;
                }
            }
            assertThat(deltas).isEqualTo(2);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (gateway.server().hub().store().messages(session).size() < 2) {
            assertThat(System.nanoTime()).as("the run finished after its client left").isLessThan(deadline);
            Thread.sleep(50);
        }
        assertThat(gateway.server().hub().store().messages(session).get(1).content()).contains("chunk 50.");
    }

    @Test
    void streamFalseAnswersOneAgentResponse() throws Exception {
        ObjectNode req = request(null, "hello");
        req.put("stream", false);
        HttpResponse<String> res = post(req.toString());
        assertThat(res.statusCode()).isEqualTo(200);
        assertThat(res.headers().firstValue("content-type").orElse("")).startsWith("application/json");
        JsonNode body = Json.MAPPER.readTree(res.body());
        assertThat(body.path("object").asText()).isEqualTo("response");
        assertThat(body.path("status").asText()).isEqualTo("completed");
        JsonNode message = body.path("output").get(0);
        assertThat(message.path("content").get(0).path("text").asText()).contains("chilled food");
    }

    @Test
    void badRequestsGetAJsonErrorAndNoStream() throws Exception {
        assertThat(post("{nope").statusCode()).isEqualTo(400);
        // JSON limits: nesting deeper than 64 is refused as malformed, with a message saying why.
        HttpResponse<String> deep = post("{\"input\":" + "[".repeat(100) + "]".repeat(100) + "}");
        assertThat(deep.statusCode()).isEqualTo(400);
        assertThat(Json.MAPPER.readTree(deep.body()).path("error").path("message").asText()).containsIgnoringCase("depth");
        assertThat(post("{}").statusCode()).isEqualTo(422);
        HttpResponse<String> notAList = post("{\"input\": 42}");
        assertThat(notAList.statusCode()).isEqualTo(422);
        assertThat(Json.MAPPER.readTree(notAList.body()).path("error").path("message").asText())
                .isEqualTo("input must be a list of messages, or a string (one user message)");
        HttpResponse<String> noText = post("{\"input\": [{\"role\": \"assistant\", \"content\": \"hi\"}]}");
        assertThat(noText.statusCode()).isEqualTo(422);
        assertThat(noText.headers().firstValue("content-type").orElse("")).startsWith("application/json");
        assertThat(Json.MAPPER.readTree(noText.body()).path("error").path("code").asText()).isEqualTo("validation_error");
    }
}
