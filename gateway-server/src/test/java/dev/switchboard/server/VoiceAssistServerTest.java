package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.http.WebSocketHandshakeException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** The VoiceAssist dialect over a real WebSocket: the spec's manual testing checklist, and more. */
class VoiceAssistServerTest {
    static final Pattern ISO_MILLIS_Z = Pattern.compile("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z$");

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension();

    private static WsClient connect(int port, String conversation, String token) {
        return WsClient.connect(port, "/api/realtime/ws?conversationId=" + conversation + (token == null ? "" : "&token=" + token));
    }

    private static String message(String content) {
        return Json.object().put("type", "message").put("content", content).toString();
    }

    private static List<JsonNode> untilComplete(WsClient c) {
        return c.until(f -> f.path("type").asText().equals("message_complete") || f.path("type").asText().equals("error"));
    }

    @Test
    void connectedComesFirstWithProtocolVersionAndCapabilities() {
        try (WsClient c = connect(gateway.port(), UUID.randomUUID().toString(), null)) {
            JsonNode connected = c.next();
            assertThat(connected.path("type").asText()).isEqualTo("connected");
            assertThat(connected.path("protocol_version").asText()).isEqualTo("1.0");
            assertThat(connected.path("client_id").asText()).isNotEmpty();
            assertThat(connected.path("capabilities").toString()).contains("text_streaming");
            assertThat(connected.path("timestamp").asText()).matches(ISO_MILLIS_Z);
        }
    }

    @Test
    void aMessageStreamsChunksWithIncreasingIndexAndCompletesWithCitations() {
        try (WsClient c = connect(gateway.port(), UUID.randomUUID().toString(), null)) {
            c.next();
            List<JsonNode> frames = untilComplete(c.send(message("What are the food storage rules?")));
            assertThat(frames.get(0).path("type").asText()).isEqualTo("message_start");
            String id = frames.get(0).path("message_id").asText();
            List<JsonNode> chunks = frames.stream().filter(f -> f.path("type").asText().equals("message_chunk")).toList();
            assertThat(chunks.size()).isGreaterThanOrEqualTo(3);
            for (int i = 0; i < chunks.size(); i++) {
                assertThat(chunks.get(i).path("chunk_index").asInt()).isEqualTo(i);
                assertThat(chunks.get(i).path("message_id").asText()).isEqualTo(id);
            }
            JsonNode complete = frames.get(frames.size() - 1);
            assertThat(complete.path("type").asText()).isEqualTo("message_complete");
            StringBuilder text = new StringBuilder();
            chunks.forEach(ch -> text.append(ch.path("content").asText()));
            assertThat(complete.path("content").asText()).isEqualTo(text.toString());
            JsonNode citation = complete.path("citations").get(0);
            assertThat(citation.fieldNames()).toIterable().contains("id", "source_type", "title", "url");
            assertThat(complete.path("timestamp").asText()).matches(ISO_MILLIS_Z);
            assertThat(frames).noneMatch(f -> f.path("type").asText().contains("tool"));
        }
    }

    @Test
    void toolCallsAndStepsOfARunAreNotSent() {
        try (WsClient c = connect(gateway.port(), UUID.randomUUID().toString(), null)) {
            c.next();
            List<JsonNode> frames = untilComplete(c.send(message("search the regulations")));
            assertThat(frames).extracting(f -> f.path("type").asText())
                    .containsOnly("message_start", "message_chunk", "message_complete");
        }
    }

    @Test
    void pingGetsPongAndWebSocketPingsAreAnswered() {
        try (WsClient c = connect(gateway.port(), UUID.randomUUID().toString(), null)) {
            c.next();
            JsonNode pong = c.send("{\"type\":\"ping\"}").next();
            assertThat(pong.path("type").asText()).isEqualTo("pong");
            assertThat(pong.path("timestamp").asText()).matches(ISO_MILLIS_Z);
        }
    }

    @Test
    void everyErrorCodeOfTheSpecsTableAndTheConnectionStaysUsable() {
        try (WsClient c = connect(gateway.port(), UUID.randomUUID().toString(), null)) {
            c.next();
            assertThat(code(c.send("{\"type\":\"dance\"}").next())).isEqualTo("UNKNOWN_MESSAGE_TYPE");
            assertThat(code(c.send("{broken").next())).isEqualTo("INVALID_MESSAGE_FORMAT");
            assertThat(code(c.send("{\"type\":\"message\"}").next())).isEqualTo("MISSING_REQUIRED_FIELD");
            assertThat(code(c.send(message("")).next())).isIn("INVALID_MESSAGE_FORMAT", "MISSING_REQUIRED_FIELD");
            assertThat(code(c.send(message("x".repeat(10_001))).next())).isEqualTo("INVALID_MESSAGE_FORMAT");
            assertThat(code(c.send(message("what the fuck")).next())).isEqualTo("QUERY_PROCESSING_ERROR");
            // The demo completes its partial answer, then the run fails.
            List<JsonNode> crashed = c.send(message("crash please")).until(f -> f.path("type").asText().equals("error"));
            assertThat(crashed).extracting(f -> f.path("type").asText()).contains("message_complete");
            JsonNode crash = crashed.get(crashed.size() - 1);
            assertThat(code(crash)).isEqualTo("INTERNAL_ERROR");
            assertThat(crash.path("timestamp").asText()).matches(ISO_MILLIS_Z);
            c.drain(java.time.Duration.ofMillis(200));
            assertThat(untilComplete(c.send(message("hello again"))).get(0).path("type").asText())
                    .isEqualTo("message_start");
        }
    }

    @Test
    void quotaExceededAndAuthFailedAreTheMappedCodes() throws Exception {
        Path own = gateway.dataDir().resolve("auth");
        try (TestGateway g = TestGateway.start(own, Map.of("jwt-secret", AuthServerTest.SECRET))) {
            String conversation = UUID.randomUUID().toString();
            String alice = AuthServerTest.hs256("alice", Instant.now().plusSeconds(600));
            try (WsClient c = connect(g.port(), conversation, alice)) {
                c.next();
                untilComplete(c.send(message("hello")));
            }
            String bob = AuthServerTest.hs256("bob", Instant.now().plusSeconds(600));
            try (WsClient c = connect(g.port(), UUID.randomUUID().toString(), bob)) {
                c.next();
                JsonNode refused = c.send(Json.object().put("type", "message").put("content", "hi")
                        .put("session_id", conversation).toString()).next();
                assertThat(code(refused)).isEqualTo("AUTH_FAILED");
            }
        }
    }

    @Test
    void authenticationRefusesMissingBadAndExpiredTokensAtTheUpgrade() throws Exception {
        Path own = gateway.dataDir().resolve("auth2");
        try (TestGateway g = TestGateway.start(own, Map.of("jwt-secret", AuthServerTest.SECRET))) {
            String conversation = UUID.randomUUID().toString();
            assertThat(status(g, conversation, null)).isEqualTo(401);
            assertThat(status(g, conversation, "garbage")).isEqualTo(401);
            assertThat(status(g, conversation, AuthServerTest.hs256("alice", Instant.now().minusSeconds(600))))
                    .isEqualTo(401);
            try (WsClient c = connect(g.port(), conversation, AuthServerTest.hs256("alice", Instant.now().plusSeconds(600)))) {
                assertThat(c.next().path("type").asText()).isEqualTo("connected");
            }
        }
    }

    @Test
    void withoutConversationIdTheUpgradeIsRefusedWith400() {
        Throwable t = catchThrowable(() -> gateway.connect("/api/realtime/ws").close());
        assertThat(t).isInstanceOf(CompletionException.class).hasCauseInstanceOf(WebSocketHandshakeException.class);
        assertThat(((WebSocketHandshakeException) t.getCause()).getResponse().statusCode()).isEqualTo(400);
    }

    @Test
    void anApprovalRaisedFromVoiceAssistIsAnsweredFromHai() throws Exception {
        String conversation = UUID.randomUUID().toString();
        try (WsClient voice = connect(gateway.port(), conversation, null); WsClient hai = gateway.connect("/hai/ws")) {
            voice.next();
            // The approval is not part of this dialect: VoiceAssist shows nothing until the answer.
            voice.send(message("generate the inspection report"));
            awaitActiveRun(conversation);
            JsonNode request = hai.ask(conversation, "I am here for the report")
                    .until(f -> f.path("type").asText().equals("tool_approval_request")).stream()
                    .reduce((a, b) -> b).orElseThrow();
            hai.send(Json.object().put("type", "tool_approval_response")
                    .put("approval_id", request.path("approval_id").asText()).put("approved", true).toString());
            List<JsonNode> rest = untilComplete(voice);
            JsonNode complete = rest.get(rest.size() - 1);
            assertThat(complete.path("type").asText()).isEqualTo("message_complete");
            assertThat(complete.path("content").asText()).contains("was generated");
        }
    }

    /** Waits until the conversation's run waits for its approval (the store lists it). */
    private static void awaitActiveRun(String conversation) throws InterruptedException {
        long deadline = System.nanoTime() + WsClient.WAIT.toNanos();
        while (gateway.server().hub().store().pendingApprovals(conversation).isEmpty()) {
            assertThat(System.nanoTime()).as("an approval is pending in " + conversation).isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    private static int status(TestGateway g, String conversation, String token) {
        Throwable t = catchThrowable(() -> connect(g.port(), conversation, token).close());
        assertThat(t).hasCauseInstanceOf(WebSocketHandshakeException.class);
        return ((WebSocketHandshakeException) t.getCause()).getResponse().statusCode();
    }

    private static String code(JsonNode error) {
        assertThat(error.path("type").asText()).as(error.toString()).isEqualTo("error");
        assertThat(error.path("timestamp").asText()).matches(ISO_MILLIS_Z);
        return error.path("error").path("code").asText();
    }
}
