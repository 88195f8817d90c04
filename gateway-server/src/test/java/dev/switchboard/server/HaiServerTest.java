package dev.switchboard.server;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.Json;
import dev.switchboard.core.testing.LogCapture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The HAI dialect end to end: the jar's server on a free port and a real WebSocket client. */
class HaiServerTest {
    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension();

    private static String session() {
        return UUID.randomUUID().toString();
    }

    private static List<String> types(List<JsonNode> frames) {
        return frames.stream().map(f -> f.path("type").asText() + (f.has("status") ? ":" + f.path("status").asText() : ""))
                .toList();
    }

    /** The assistant's text in HAI frames. */
    static String text(List<JsonNode> frames) {
        StringBuilder sb = new StringBuilder();
        frames.stream().filter(f -> f.path("type").asText().startsWith("assistant_message"))
                .forEach(f -> sb.append(f.path("content").asText()));
        return sb.toString();
    }

    @Test
    void basicQuestionStreamsChunksWithOneFinalChunkAndCitations() {
        String s = session();
        try (WsClient c = gateway.connect("/ws")) {
            List<JsonNode> frames = c.ask(s, "What are the regulations for food storage?").untilCompleted();
            assertThat(types(frames).get(0)).isEqualTo("status:thinking");
            List<JsonNode> chunks = frames.stream().filter(f -> f.path("type").asText().equals("assistant_message_chunk")).toList();
            assertThat(chunks.size()).isGreaterThanOrEqualTo(4);
            assertThat(chunks).allSatisfy(ch -> {
                assertThat(ch.path("session_id").asText()).isEqualTo(s);
                assertThat(ch.path("message_id").asText()).isEqualTo(chunks.get(0).path("message_id").asText());
            });
            assertThat(chunks.stream().filter(ch -> ch.path("is_final").asBoolean())).hasSize(1);
            JsonNode last = chunks.get(chunks.size() - 1);
            assertThat(last.path("is_final").asBoolean()).isTrue();
            JsonNode citation = last.path("metadata").path("citations").get(0);
            assertThat(citation.fieldNames()).toIterable().contains("id", "source_type", "title", "url");
            assertThat(text(frames)).contains("chilled food");
            assertThat(frames).allSatisfy(f -> {
                if (f.path("type").asText().equals("status")) {
                    assertThat(f.path("session_id").asText()).isEqualTo(s);
                }
            });
        }
    }

    @Test
    void searchRunsTheToolBetweenRoutingAndTheAnswer() {
        String s = session();
        try (WsClient c = gateway.connect("/hai/ws")) {
            List<JsonNode> frames = c.ask(s, "Search for restaurant regulations").untilCompleted();
            List<String> t = types(frames);
            assertThat(t).containsSubsequence("status:thinking", "status:routing", "status:executing_tools",
                    "tool_call:started", "tool_call:completed", "assistant_message_chunk", "status:completed");
            JsonNode started = frames.get(t.indexOf("tool_call:started"));
            assertThat(started.path("tool_name").asText()).isEqualTo("search_regulations");
            assertThat(started.path("parameters").path("query").asText()).isEqualTo("Search for restaurant regulations");
            JsonNode done = frames.get(t.indexOf("tool_call:completed"));
            assertThat(done.path("tool_call_id").asText()).isEqualTo(started.path("tool_call_id").asText());
            assertThat(done.path("result").asText()).isEqualTo("Found 5 relevant regulations");
        }
    }

    @Test
    void approvedReportRunsTheToolAndRejectedReportDoesNot() {
        try (WsClient c = gateway.connect("/ws")) {
            String s = session();
            JsonNode request = c.ask(s, "Generate the inspection report")
                    .until(f -> f.path("type").asText().equals("tool_approval_request")).stream()
                    .reduce((a, b) -> b).orElseThrow();
            assertThat(request.path("tool_name").asText()).isEqualTo("generate_inspection_report");
            assertThat(request.path("risk_level").asText()).isEqualTo("high");
            assertThat(request.path("parameters").path("inspection_id").asText()).isEqualTo("INS-2024-001");
            assertThat(request.path("reasoning").asText()).isNotEmpty();
            assertThat(request.path("tool_description").asText()).isNotEmpty();
            assertThat(request.path("session_id").asText()).isEqualTo(s);
            c.send(Json.object().put("type", "tool_approval_response").put("approval_id", request.path("approval_id").asText())
                    .put("approved", true).put("feedback", "Looks good").toString());
            List<JsonNode> rest = c.untilCompleted();
            assertThat(types(rest)).containsSubsequence("tool_call:started", "tool_call:completed", "assistant_message_chunk",
                    "status:completed");
            assertThat(text(rest)).contains("was generated");

            String s2 = session();
            JsonNode request2 = c.ask(s2, "generate the REPORT please")
                    .until(f -> f.path("type").asText().equals("tool_approval_request")).stream()
                    .reduce((a, b) -> b).orElseThrow();
            c.send(Json.object().put("type", "tool_approval_response").put("approval_id", request2.path("approval_id").asText())
                    .put("approved", false).put("feedback", "Not yet").toString());
            List<JsonNode> rejected = c.untilCompleted();
            assertThat(types(rejected)).doesNotContain("tool_call:started");
            assertThat(text(rejected)).contains("not generated").contains("Not yet");
        }
    }

    @Test
    void blockedWordsGetModerationErrorAndTheRephrasedMessageRuns() {
        String s = session();
        try (WsClient c = gateway.connect("/ws")) {
            JsonNode error = c.ask(s, "what the fuck are the rules").next();
            assertThat(error.path("type").asText()).isEqualTo("error");
            assertThat(error.path("error_code").asText()).isEqualTo("moderation_violation");
            List<JsonNode> frames = c.ask(s, "what are the rules").untilCompleted();
            assertThat(types(frames)).contains("assistant_message_chunk");
        }
    }

    @Test
    void brokenToolReportsFailureThenExplains() {
        try (WsClient c = gateway.connect("/ws")) {
            List<JsonNode> frames = c.ask(session(), "try the broken tool").untilCompleted();
            assertThat(types(frames)).containsSubsequence("tool_call:started", "tool_call:failed", "assistant_message_chunk");
            assertThat(frames.get(types(frames).indexOf("tool_call:failed")).path("result").asText())
                    .isEqualTo("Database connection timeout");
        }
    }

    @Test
    void crashSendsInternalErrorThenCompleted() {
        try (WsClient c = gateway.connect("/ws")) {
            List<JsonNode> frames = c.ask(session(), "crash now").untilCompleted();
            List<String> t = types(frames);
            assertThat(t).containsSubsequence("assistant_message_chunk", "error", "status:completed");
            assertThat(frames.get(t.indexOf("error")).path("error_code").asText()).isEqualTo("internal_error");
        }
    }

    @Test
    void aCrashedRunIsLoggedAtWarnWithItsConversationRunAndErrorCode() throws Exception {
        String s = session();
        try (LogCapture logs = LogCapture.of(ConversationHub.class); WsClient c = gateway.connect("/ws")) {
            c.ask(s, "crash now").untilCompleted();
            // A client may see events before they are stored: wait for the store before reading it.
            gateway.server().hub().flushed().get();
            String runId = gateway.server().hub().store().events(s, 0, 100).get(0).runId();

            logs.await(Level.WARN, WsClient.WAIT, "conversation " + s, "run " + runId, "internal_error");
        }
    }

    @Test
    void nonStreamingMetadataGivesOneAssistantMessage() {
        String s = session();
        try (WsClient c = gateway.connect("/ws")) {
            c.send(Json.object().put("type", "user_message").put("content", "What are the rules?").put("session_id", s)
                    .set("metadata", Json.object().put("stream", false)).toString());
            List<JsonNode> frames = c.untilCompleted();
            assertThat(types(frames)).containsExactly("status:thinking", "assistant_message", "status:completed");
            assertThat(frames.get(1).path("content").asText()).contains("chilled food");
            assertThat(frames.get(1).path("session_id").asText()).isEqualTo(s);
        }
    }

    @Test
    void historyCountsEarlierUserMessagesAcrossConnections() {
        String s = session();
        try (WsClient c = gateway.connect("/ws")) {
            c.ask(s, "hello").untilCompleted();
            c.ask(s, "search something").untilCompleted();
        }
        try (WsClient c = gateway.connect("/hai/ws")) {
            assertThat(text(c.ask(s, "History").untilCompleted())).contains("2 earlier messages");
        }
    }

    @Test
    void aSecondMessageDuringARunGetsRunInProgress() {
        String s = session();
        try (WsClient c = gateway.connect("/ws")) {
            c.ask(s, "slow please");
            assertThat(c.next().path("status").asText()).isEqualTo("thinking");
            c.ask(s, "another");
            JsonNode error = c.until(f -> f.path("type").asText().equals("error")).stream().reduce((a, b) -> b).orElseThrow();
            assertThat(error.path("error_code").asText()).isEqualTo("run_in_progress");
        }
    }

    @Test
    void everyBadInputGetsItsErrorAndTheConnectionStaysUsable() {
        try (WsClient c = gateway.connect("/ws")) {
            assertThat(errorFor(c, "{not json")).isEqualTo("invalid_json");
            assertThat(errorFor(c, "[1,2]")).isEqualTo("invalid_json");
            assertThat(errorFor(c, "{\"type\":\"dance\"}")).isEqualTo("unknown_message_type");
            assertThat(errorFor(c, "{\"type\":\"status\",\"status\":\"thinking\"}")).isEqualTo("unknown_message_type");
            assertThat(errorFor(c, "{\"content\":\"hi\",\"session_id\":\"s\"}")).isEqualTo("validation_error");
            assertThat(errorFor(c, "{\"type\":\"user_message\",\"session_id\":\"s\"}")).isEqualTo("validation_error");
            assertThat(errorFor(c, "{\"type\":\"user_message\",\"content\":\"hi\"}")).isEqualTo("validation_error");
            assertThat(errorFor(c, "{\"type\":\"user_message\",\"content\":42,\"session_id\":\"s\"}")).isEqualTo("validation_error");
            assertThat(errorFor(c, "{\"type\":\"user_message\",\"content\":\"\",\"session_id\":\"s\"}")).isEqualTo("validation_error");
            assertThat(errorFor(c, Json.object().put("type", "user_message").put("content", "x".repeat(10_001))
                    .put("session_id", "s").toString())).isEqualTo("validation_error");
            assertThat(errorFor(c, "{\"type\":\"tool_approval_response\",\"approval_id\":\"appr_unknown\",\"approved\":true}"))
                    .isEqualTo("validation_error");
            assertThat(errorFor(c, "{\"type\":\"tool_approval_response\",\"approval_id\":\"a\",\"approved\":\"yes\"}"))
                    .isEqualTo("validation_error");
            // JSON limits: nesting deeper than 64, a number longer than 100 digits.
            assertThat(errorFor(c, "{\"type\":\"user_message\",\"metadata\":" + "[".repeat(100) + "]".repeat(100) + "}"))
                    .isEqualTo("invalid_json");
            assertThat(errorFor(c, "{\"type\":\"user_message\",\"content\":\"hi\",\"session_id\":\"s\",\"n\":"
                    + "9".repeat(200) + "}")).isEqualTo("invalid_json");
            c.sendBinary(new byte[] {1, 2, 3});
            assertThat(c.next().path("error_code").asText()).isEqualTo("invalid_json");
            assertThat(types(c.ask(session(), "still there?").untilCompleted())).contains("status:completed");
        }
    }

    @Test
    void anApprovalOfAConversationNotJoinedIsRefused() {
        try (WsClient owner = gateway.connect("/ws"); WsClient stranger = gateway.connect("/ws")) {
            JsonNode request = owner.ask(session(), "report")
                    .until(f -> f.path("type").asText().equals("tool_approval_request")).stream()
                    .reduce((a, b) -> b).orElseThrow();
            String id = request.path("approval_id").asText();
            JsonNode error = stranger.send(Json.object().put("type", "tool_approval_response").put("approval_id", id)
                    .put("approved", true).toString()).next();
            assertThat(error.path("error_code").asText()).isEqualTo("invalid_session");
            owner.send(Json.object().put("type", "tool_approval_response").put("approval_id", id)
                    .put("approved", false).toString());
            assertThat(text(owner.untilCompleted())).contains("not generated");
            JsonNode again = owner.send(Json.object().put("type", "tool_approval_response").put("approval_id", id)
                    .put("approved", true).toString()).next();
            assertThat(again.path("error_code").asText()).isEqualTo("validation_error");
            assertThat(again.path("message").asText()).contains("already decided");
        }
    }

    @Test
    void aFrameOverTheLimitIsClosedWith1009() {
        try (WsClient c = gateway.connect("/ws")) {
            c.send("{\"type\":\"user_message\",\"content\":\"" + "x".repeat(70_000) + "\",\"session_id\":\"s\"}");
            assertThat(c.awaitClose()).isEqualTo(1009);
        }
    }

    @Test
    void subprotocolHaiIsEchoed() {
        try (WsClient c = gateway.connect("/ws", "hai")) {
            assertThat(c.subprotocol()).isEqualTo("hai");
            assertThat(types(c.ask(session(), "hello").untilCompleted())).contains("status:completed");
        }
    }

    @Test
    void healthzIsOkAndUnknownPathsAre404() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> health = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + gateway.port() + "/healthz")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(Json.MAPPER.readTree(health.body()).path("status").asText()).isEqualTo("ok");
        assertThat(Json.MAPPER.readTree(health.body()).path("store").asText()).isEqualTo("ok");
        HttpResponse<String> missing = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + gateway.port() + "/nope")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(Json.MAPPER.readTree(missing.body()).path("error").path("code").asText()).isEqualTo("not_found");
        HttpResponse<String> plain = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + gateway.port() + "/ws")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(plain.statusCode()).isEqualTo(426);
    }

    private static String errorFor(WsClient c, String frame) {
        List<JsonNode> got = c.send(frame).drain(Duration.ofMillis(300));
        assertThat(got).as("answer to " + frame).hasSize(1);
        assertThat(got.get(0).path("type").asText()).isEqualTo("error");
        assertThat(got.get(0).path("message").asText()).isNotEmpty();
        return got.get(0).path("error_code").asText();
    }
}
