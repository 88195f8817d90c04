package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Json;
import dev.switchboard.server.GatewayConfig.Option;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two gateways in a chain: A runs the demo agent and serves {@code POST /agui}; B runs the
 * {@code agui} runtime pointed at A. Every demo flow of A shows on B's dialects.
 */
class AguiChainServerTest {
    @TempDir
    static Path dataA;
    @TempDir
    static Path dataB;
    static TestGateway a;
    static TestGateway b;

    @BeforeAll
    static void start() {
        a = TestGateway.start(dataA);
        b = TestGateway.start(dataB, Map.of("runtime", "agui",
                "agui-upstream-url", "http://127.0.0.1:" + a.port() + "/agui"));
    }

    @AfterAll
    static void stop() {
        b.close();
        a.close();
    }

    private static List<String> types(List<JsonNode> frames) {
        return frames.stream().map(f -> {
            String type = f.path("type").asText();
            return type.equals("status") || type.equals("tool_call") ? type + ":" + f.path("status").asText() : type;
        }).toList();
    }

    private static String chunks(List<JsonNode> frames) {
        StringBuilder sb = new StringBuilder();
        frames.stream().filter(f -> f.path("type").asText().equals("assistant_message_chunk"))
                .forEach(f -> sb.append(f.path("content").asText()));
        return sb.toString();
    }

    private static JsonNode frame(List<JsonNode> frames, String type) {
        return frames.stream().filter(f -> types(List.of(f)).get(0).equals(type)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + type + " in " + frames));
    }

    private static String session() {
        return "chain-" + UUID.randomUUID();
    }

    @Test
    void theDemoAnswerStreamsOnHaiOfTheSecondGateway() {
        try (WsClient c = b.connect("/ws")) {
            List<JsonNode> frames = c.ask(session(), "What are the rules for food storage?").untilCompleted();

            assertThat(types(frames)).startsWith("status:thinking").endsWith("status:completed");
            assertThat(chunks(frames)).startsWith("Based on the food hygiene regulations, ").contains("chilled food");
            assertThat(frames).filteredOn(f -> f.path("is_final").asBoolean()).hasSize(1);
        }
    }

    @Test
    void theDemoToolCallAndItsResultShowOnHai() {
        try (WsClient c = b.connect("/ws")) {
            List<JsonNode> frames = c.ask(session(), "Search for restaurant regulations").untilCompleted();

            assertThat(types(frames)).containsSubsequence("status:routing", "status:executing_tools",
                    "tool_call:started", "tool_call:completed", "assistant_message_chunk", "status:completed");
            JsonNode started = frame(frames, "tool_call:started");
            assertThat(started.path("tool_name").asText()).isEqualTo("search_regulations");
            assertThat(started.path("parameters").path("query").asText()).isEqualTo("Search for restaurant regulations");
            assertThat(frame(frames, "tool_call:completed").path("result").asText())
                    .isEqualTo("Found 5 relevant regulations");
            assertThat(chunks(frames)).contains("I found 5 relevant regulations.");
        }
    }

    @Test
    void anApprovalAnsweredOnTheSecondGatewayResumesTheFirst() {
        try (WsClient c = b.connect("/ws")) {
            List<JsonNode> asked = c.ask(session(), "Generate the inspection report")
                    .until(f -> f.path("type").asText().equals("tool_approval_request"));
            JsonNode request = asked.get(asked.size() - 1);
            assertThat(request.path("tool_name").asText()).isEqualTo("generate_inspection_report");
            assertThat(request.path("tool_description").asText())
                    .isEqualTo("Generates official PDF inspection report that will be stored permanently");
            assertThat(request.path("parameters").path("inspection_id").asText()).isEqualTo("INS-2024-001");
            assertThat(request.path("reasoning").asText()).isEqualTo("User requested to finalize the inspection report");
            assertThat(request.path("risk_level").asText()).isEqualTo("high");

            c.send(Json.object().put("type", "tool_approval_response")
                    .put("approval_id", request.path("approval_id").asText()).put("approved", true).toString());
            List<JsonNode> rest = c.untilCompleted();

            assertThat(types(rest)).containsSubsequence("tool_call:started", "tool_call:completed",
                    "assistant_message_chunk", "status:completed");
            assertThat(frame(rest, "tool_call:completed").path("result").asText())
                    .isEqualTo("Report INS-2024-001 generated and stored as RPT-INS-2024-001.pdf");
            assertThat(chunks(rest)).contains("was generated");
        }
    }

    @Test
    void aRejectionOnTheSecondGatewayReachesTheFirstWithItsFeedback() {
        try (WsClient c = b.connect("/ws")) {
            List<JsonNode> asked = c.ask(session(), "report please")
                    .until(f -> f.path("type").asText().equals("tool_approval_request"));
            c.send(Json.object().put("type", "tool_approval_response")
                    .put("approval_id", asked.get(asked.size() - 1).path("approval_id").asText()).put("approved", false)
                    .put("feedback", "Not yet").toString());
            List<JsonNode> rest = c.untilCompleted();

            assertThat(types(rest)).doesNotContain("tool_call:started");
            assertThat(chunks(rest)).contains("was not generated").contains("Your feedback: Not yet");
        }
    }

    @Test
    void theDemoCrashIsAnUpstreamErrorOnHai() {
        try (WsClient c = b.connect("/ws")) {
            List<JsonNode> frames = c.ask(session(), "crash").untilCompleted();

            JsonNode error = frame(frames, "error");
            assertThat(error.path("error_code").asText()).isEqualTo("upstream_error");
            assertThat(error.path("message").asText()).isEqualTo("the AG-UI agent's run failed: the demo agent crashed "
                    + "while answering (the message asked it to) (internal_error)");
            assertThat(types(frames)).endsWith("error", "status:completed");
        }
    }

    @Test
    void theConversationsHistoryReachesTheFirstGateway() {
        String session = session();
        try (WsClient c = b.connect("/ws")) {
            c.ask(session, "hello").untilCompleted();
            c.ask(session, "search something").untilCompleted();

            assertThat(chunks(c.ask(session, "history").untilCompleted())).contains("2 earlier messages");
        }
    }

    @Test
    void aConversationBegunOnHaiContinuesOnAguiThroughTheChain() {
        String session = session();
        try (WsClient c = b.connect("/ws")) {
            c.ask(session, "hello").untilCompleted();
        }

        List<JsonNode> events = AguiHttp.run(b.port(), AguiHttp.input(session, "history"));

        assertThat(AguiHttp.text(events)).contains("has 1 earlier message from you");
        assertThat(AguiHttp.last(events).path("outcome").path("type").asText()).isEqualTo("success");
    }

    @Test
    void theDemoAnswerShowsOnVoiceAssistOfTheSecondGateway() {
        try (WsClient c = b.connect("/api/realtime/ws?conversationId=" + session())) {
            assertThat(c.next().path("type").asText()).isEqualTo("connected");
            List<JsonNode> frames = c.send(Json.object().put("type", "message").put("content", "Food storage rules?")
                    .toString()).until(f -> f.path("type").asText().equals("message_complete"));

            assertThat(frames.get(0).path("type").asText()).isEqualTo("message_start");
            assertThat(frames.get(frames.size() - 1).path("content").asText()).contains("chilled food");
        }
    }

    @Test
    void theDemoAnswerAndToolShowOnAgentScopeOfTheSecondGateway() throws Exception {
        ObjectNode request = Json.object().put("session_id", session());
        request.putArray("input").addObject().put("role", "user").put("type", "message").putArray("content")
                .addObject().put("type", "text").put("text", "Search for restaurant regulations");
        HttpResponse<String> res = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + b.port() + "/process")).header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(20)).POST(HttpRequest.BodyPublishers.ofString(request.toString())).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(res.statusCode()).isEqualTo(200);
        String body = res.body();
        assertThat(body).contains("\"type\":\"function_call\"").contains("search_regulations")
                .contains("Found 5 relevant regulations").contains("\"status\":\"completed\"");
    }

    @Test
    void theOfficialAguiClientRunsEveryDemoFlowThroughTheChain() throws Exception {
        NodeClient.Result r = NodeClient.run("agui-official-client.mjs", 180, "http://127.0.0.1:" + b.port());

        assertThat(r.lines()).as(r.output()).contains("8 passed, 0 failed");
        assertThat(r.exitCode()).as(r.output()).isZero();
    }
}
