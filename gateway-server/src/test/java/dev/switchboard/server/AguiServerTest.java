package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** AG-UI over the AGORA WebSocket profile and over HTTP+SSE, with real clients on a real socket. */
class AguiServerTest {
    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension();
    static final HttpClient HTTP = HttpClient.newHttpClient();

    private static ObjectNode input(String threadId, String text) {
        ObjectNode in = Json.object().put("threadId", threadId).put("runId", UUID.randomUUID().toString());
        ArrayNode messages = in.putArray("messages");
        messages.addObject().put("id", UUID.randomUUID().toString()).put("role", "user").put("content", text);
        return in;
    }

    private static List<String> types(List<JsonNode> events) {
        return events.stream().map(e -> e.path("type").asText()).toList();
    }

    private static List<JsonNode> untilRunFinished(WsClient c) {
        return c.until(e -> e.path("type").asText().equals("RUN_FINISHED"));
    }

    // ---- WebSocket, AGORA profile --------------------------------------------------------

    @Test
    void agoraBasicFlowOverSubprotocolAgUi() {
        try (WsClient c = gateway.connect("/ws", "ag-ui")) {
            assertThat(c.subprotocol()).isEqualTo("ag-ui");
            String thread = UUID.randomUUID().toString();
            ObjectNode in = Json.object().put("threadId", thread);
            in.putArray("messages").addObject().put("role", "user").put("content", "What are the food safety regulations?");
            in.putObject("context");
            List<JsonNode> events = untilRunFinished(c.send(in.toString()));
            List<String> t = types(events);
            assertThat(t.get(0)).isEqualTo("RUN_STARTED");
            assertThat(t.get(1)).isEqualTo("STATE_SNAPSHOT");
            assertThat(t).containsSubsequence("STEP_STARTED", "STEP_FINISHED", "TEXT_MESSAGE_START",
                    "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "STATE_SNAPSHOT", "RUN_FINISHED");
            assertThat(events.get(0).path("threadId").asText()).isEqualTo(thread);
            assertThat(events.get(0).path("runId").asText()).isNotEmpty();
            assertThat(events).allSatisfy(e -> {
                assertThat(e.path("timestamp").isIntegralNumber()).as(e.toString()).isTrue();
                assertThat(e.toString()).doesNotContain(":null");
            });
            assertThat(events).filteredOn(e -> e.path("type").asText().equals("TEXT_MESSAGE_CONTENT"))
                    .allSatisfy(e -> assertThat(e.path("delta").asText()).isNotEmpty());
        }
    }

    @Test
    void agoraStepsNeverOverlapAndToolCallsHaveAllFourEvents() {
        try (WsClient c = gateway.connect("/agui/ws")) {
            List<JsonNode> events = untilRunFinished(c.send(input(UUID.randomUUID().toString(),
                    "search the regulations").toString()));
            String open = null;
            for (JsonNode e : events) {
                switch (e.path("type").asText()) {
                    case "STEP_STARTED" -> {
                        assertThat(open).as("a step is open when " + e + " starts").isNull();
                        open = e.path("stepName").asText();
                    }
                    case "STEP_FINISHED" -> {
                        assertThat(e.path("stepName").asText()).isEqualTo(open);
                        open = null;
                    }
                    default -> {
                    }
                }
            }
            assertThat(types(events)).containsSubsequence("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
                    "TOOL_CALL_RESULT");
            JsonNode start = events.get(types(events).indexOf("TOOL_CALL_START"));
            assertThat(start.path("toolCallName").asText()).isEqualTo("search_regulations");
            JsonNode result = events.get(types(events).indexOf("TOOL_CALL_RESULT"));
            assertThat(result.path("role").asText()).isEqualTo("tool");
            assertThat(result.path("content").asText()).isEqualTo("Found 5 relevant regulations");
        }
    }

    @Test
    void agoraApprovalIsACustomEventAnsweredWithACustomEvent() {
        try (WsClient c = gateway.connect("/ws")) {
            JsonNode request = c.send(input(UUID.randomUUID().toString(), "generate the report").toString())
                    .until(e -> e.path("type").asText().equals("CUSTOM")).stream().reduce((a, b) -> b).orElseThrow();
            assertThat(request.path("name").asText()).isEqualTo("agora:tool_approval_request");
            JsonNode value = request.path("value");
            assertThat(value.path("toolName").asText()).isEqualTo("generate_inspection_report");
            assertThat(value.path("riskLevel").asText()).isEqualTo("high");
            assertThat(value.path("parameters").path("inspection_id").asText()).isEqualTo("INS-2024-001");
            ObjectNode answer = Json.object().put("type", "CUSTOM").put("name", "agora:tool_approval_response");
            answer.putObject("value").put("approvalId", value.path("approvalId").asText()).put("approved", true)
                    .put("feedback", "ok");
            List<JsonNode> rest = untilRunFinished(c.send(answer.toString()));
            assertThat(types(rest)).containsSubsequence("TOOL_CALL_START", "TOOL_CALL_RESULT", "TEXT_MESSAGE_CONTENT");
        }
    }

    @Test
    void agoraCrashIsRunErrorThenRunFinished() {
        try (WsClient c = gateway.connect("/ws", "ag-ui")) {
            List<JsonNode> events = untilRunFinished(c.send(input(UUID.randomUUID().toString(), "crash").toString()));
            assertThat(types(events)).endsWith("RUN_ERROR", "RUN_FINISHED");
            assertThat(events.get(events.size() - 2).path("code").asText()).isEqualTo("internal_error");
        }
    }

    @Test
    void agoraBadInputGetsAnErrorEventAndTheConnectionStaysOpen() {
        try (WsClient c = gateway.connect("/ws", "ag-ui")) {
            JsonNode error = c.send("{oops").next();
            assertThat(error.path("type").asText()).isEqualTo("CUSTOM");
            assertThat(error.path("name").asText()).isEqualTo("agora:error");
            assertThat(error.path("value").path("errorCode").asText()).isEqualTo("invalid_json");
            JsonNode moderation = c.send(input(UUID.randomUUID().toString(), "shit happens").toString()).next();
            assertThat(moderation.path("value").path("errorCode").asText()).isEqualTo("moderation_violation");
            JsonNode missing = c.send("{\"messages\":[]}").next();
            assertThat(missing.path("value").path("errorCode").asText()).isEqualTo("validation_error");
            assertThat(types(untilRunFinished(c.send(input(UUID.randomUUID().toString(), "hello").toString()))))
                    .contains("RUN_FINISHED");
        }
    }

    @Test
    void aRunAgentInputAsFirstFrameOnWsIsRecognisedWithoutASubprotocol() {
        try (WsClient c = gateway.connect("/ws")) {
            assertThat(c.subprotocol()).isEmpty();
            List<JsonNode> events = untilRunFinished(c.send(input(UUID.randomUUID().toString(), "hi").toString()));
            assertThat(types(events).get(0)).isEqualTo("RUN_STARTED");
        }
    }

    // ---- HTTP + SSE ----------------------------------------------------------------------

    private static HttpResponse<String> post(String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/agui"))
                .header("Content-Type", "application/json").header("Accept", "text/event-stream")
                .timeout(Duration.ofSeconds(20))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static List<JsonNode> sse(HttpResponse<String> res) throws Exception {
        assertThat(res.statusCode()).as(res.body()).isEqualTo(200);
        assertThat(res.headers().firstValue("content-type").orElse("")).startsWith("text/event-stream");
        List<JsonNode> events = AguiHttp.events(res.body());
        assertThat(res.body()).as("events carry their cursor").contains("id: ");
        return events;
    }

    @Test
    void sseStreamIsIdAndDataLinesWithLfAndEndsWithRunFinished() throws Exception {
        ObjectNode in = input(UUID.randomUUID().toString(), "hello");
        in.putObject("state").put("mode", "demo");
        List<JsonNode> events = sse(post(in.toString()));
        assertThat(types(events).get(0)).isEqualTo("RUN_STARTED");
        assertThat(events.get(0).path("runId").asText()).isEqualTo(in.path("runId").asText());
        assertThat(events.get(1).path("type").asText()).isEqualTo("STATE_SNAPSHOT");
        assertThat(events.get(1).path("snapshot").path("mode").asText()).isEqualTo("demo");
        JsonNode last = events.get(events.size() - 1);
        assertThat(last.path("type").asText()).isEqualTo("RUN_FINISHED");
        assertThat(last.path("outcome").path("type").asText()).isEqualTo("success");
    }

    @Test
    void aLongAnswerOverSseArrivesWholeAndInOrder() throws Exception {
        // Some 3,000 events of ~90 bytes: a drain hands its gathered chunks to the channel several
        // times before it ends, and the last ones with the body's end.
        List<JsonNode> events = sse(post(input(UUID.randomUUID().toString(), "benchmark 3000").toString()));

        List<String> expected = new ArrayList<>(List.of("RUN_STARTED", "TEXT_MESSAGE_START"));
        expected.addAll(Collections.nCopies(3000, "TEXT_MESSAGE_CONTENT"));
        expected.addAll(List.of("TEXT_MESSAGE_END", "RUN_FINISHED"));
        assertThat(types(events)).containsExactlyElementsOf(expected);
        assertThat(events.subList(2, 3002)).allSatisfy(e -> assertThat(e.path("delta").asText()).isEqualTo("token "));
    }

    @Test
    void invalidInputGets4xxJsonAndNoStream() throws Exception {
        HttpResponse<String> malformed = post("{nope");
        assertThat(malformed.statusCode()).isEqualTo(400);
        assertThat(Json.MAPPER.readTree(malformed.body()).path("error").path("code").asText()).isEqualTo("invalid_json");
        ObjectNode noThread = input("t", "hi");
        noThread.remove("threadId");
        assertThat(post(noThread.toString()).statusCode()).isEqualTo(422);
        ObjectNode noRun = input("t", "hi");
        noRun.remove("runId");
        assertThat(post(noRun.toString()).statusCode()).isEqualTo(422);
        ObjectNode noMessages = input("t", "hi");
        noMessages.remove("messages");
        assertThat(post(noMessages.toString()).statusCode()).isEqualTo(422);
        ObjectNode wrongType = input("t", "hi");
        wrongType.put("messages", "hello");
        assertThat(post(wrongType.toString()).statusCode()).isEqualTo(422);
        HttpResponse<String> tooLong = post(input("t", "x".repeat(10_001)).toString());
        assertThat(tooLong.statusCode()).isEqualTo(422);
        assertThat(tooLong.headers().firstValue("content-type").orElse("")).startsWith("application/json");
        HttpResponse<String> moderated = post(input(UUID.randomUUID().toString(), "fuck this").toString());
        assertThat(moderated.statusCode()).isEqualTo(422);
        assertThat(Json.MAPPER.readTree(moderated.body()).path("error").path("code").asText())
                .isEqualTo("moderation_violation");
        HttpResponse<String> get = HTTP.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + gateway.port() + "/agui")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(get.statusCode()).isEqualTo(405);
    }

    @Test
    void aThreadBegunOverHaiContinuesOverAgui() throws Exception {
        String conversation = UUID.randomUUID().toString();
        try (WsClient hai = gateway.connect("/hai/ws")) {
            hai.ask(conversation, "hello from HAI").untilCompleted();
        }
        List<JsonNode> events = sse(post(input(conversation, "history").toString()));
        StringBuilder text = new StringBuilder();
        events.stream().filter(e -> e.path("type").asText().equals("TEXT_MESSAGE_CONTENT"))
                .forEach(e -> text.append(e.path("delta").asText()));
        assertThat(text.toString()).contains("has 1 earlier message from you");
    }

    @Test
    void interruptedRunsSurviveARestartAndResumeAfterIt(@TempDir Path ownDir) throws Exception {
        String thread = UUID.randomUUID().toString();
        String interruptId;
        try (TestGateway g = TestGateway.start(ownDir)) {
            HttpResponse<String> first = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.port() + "/agui"))
                    .POST(HttpRequest.BodyPublishers.ofString(input(thread, "report").toString())).build(),
                    HttpResponse.BodyHandlers.ofString());
            List<JsonNode> events = sse(first);
            JsonNode end = events.get(events.size() - 1);
            assertThat(end.path("outcome").path("type").asText()).isEqualTo("interrupt");
            interruptId = end.path("outcome").path("interrupts").get(0).path("id").asText();
        }
        try (TestGateway g = TestGateway.start(ownDir)) {
            ObjectNode resume = Json.object().put("threadId", thread).put("runId", UUID.randomUUID().toString());
            resume.putArray("messages");
            resume.putArray("resume").addObject().put("interruptId", interruptId).put("status", "resolved")
                    .putObject("payload").put("approved", true);
            List<JsonNode> events = sse(HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.port() + "/agui"))
                    .POST(HttpRequest.BodyPublishers.ofString(resume.toString())).build(), HttpResponse.BodyHandlers.ofString()));
            assertThat(types(events).get(0)).isEqualTo("RUN_STARTED");
            assertThat(events.get(0).path("runId").asText()).isEqualTo(resume.path("runId").asText());
            assertThat(types(events)).contains("TOOL_CALL_RESULT");
            assertThat(events.get(events.size() - 1).path("outcome").path("type").asText()).isEqualTo("success");
        }
    }
}
