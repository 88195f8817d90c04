package dev.switchboard.server;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import dev.switchboard.core.testing.LogCapture;
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
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Restarts and shutdown of the whole gateway. */
class LifecycleTest {
    @TempDir
    Path dataDir;

    private static String text(List<JsonNode> frames) {
        StringBuilder sb = new StringBuilder();
        frames.forEach(f -> sb.append(f.path("content").asText()));
        return sb.toString();
    }

    @Test
    void historySurvivesARestartOfTheGateway() {
        try (TestGateway g = TestGateway.start(dataDir); WsClient c = g.connect("/ws")) {
            c.ask("persisted", "first question").untilCompleted();
            c.ask("persisted", "second question").untilCompleted();
            c.ask("persisted", "third question").untilCompleted();
        }
        try (TestGateway g = TestGateway.start(dataDir); WsClient c = g.connect("/ws")) {
            assertThat(text(c.ask("persisted", "history").untilCompleted())).contains("3 earlier messages");
            assertThat(g.server.hub().store().events("persisted", 0, 10_000))
                    .extracting(e -> e.seq()).startsWith(1L, 2L, 3L).doesNotHaveDuplicates();
        }
    }

    @Test
    void shutdownLetsTheActiveRunFinishThenClosesWith1001() {
        TestGateway g = TestGateway.start(dataDir, Map.of("demo-delay-ms", 20));
        try (WsClient c = g.connect("/ws")) {
            c.ask("s", "hello");
            assertThat(c.next().path("status").asText()).isEqualTo("thinking");
            CompletableFuture<Void> stopping = g.server.stop(Duration.ofSeconds(5));
            List<JsonNode> rest = c.untilCompleted();
            assertThat(text(rest)).contains("chilled food");
            assertThat(c.awaitClose()).isEqualTo(1001);
            stopping.join();
        }
    }

    @Test
    void shutdownFailsRunsThatOutlastTheGrace() {
        TestGateway g = TestGateway.start(dataDir);
        try (WsClient c = g.connect("/ws")) {
            c.ask("s", "slow");
            assertThat(c.next().path("status").asText()).isEqualTo("thinking");
            g.server.stop(Duration.ofMillis(200)).join();
            List<JsonNode> rest = c.untilCompleted();
            JsonNode error = rest.stream().filter(f -> f.path("type").asText().equals("error")).findFirst().orElseThrow();
            assertThat(error.path("error_code").asText()).isEqualTo("service_unavailable");
            assertThat(c.awaitClose()).isEqualTo(1001);
        }
    }

    @Test
    void aRunThatOnlyWaitsForAnApprovalDoesNotHoldTheShutdownAndIsAnsweredAfterARestart() {
        TestGateway g = TestGateway.start(dataDir, Map.of("shutdown-grace-seconds", 30));
        String approvalId;
        try (WsClient c = g.connect("/hai/ws")) {
            List<JsonNode> asked = c.ask("waits", "please write the report").until(LifecycleTest::isApprovalRequest);
            approvalId = asked.get(asked.size() - 1).path("approval_id").asText();

            long start = System.nanoTime();
            g.server.stop().join();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("stop with a grace of 30 s")
                    .isLessThan(Duration.ofSeconds(15));
            List<JsonNode> rest = c.untilCompleted();
            assertThat(rest).filteredOn(f -> f.path("type").asText().equals("error")).singleElement()
                    .satisfies(e -> assertThat(e.path("error_code").asText()).isEqualTo("service_unavailable"));
            assertThat(c.awaitClose()).isEqualTo(1001);
        }

        try (TestGateway again = TestGateway.start(dataDir); WsClient c = again.connect("/hai/ws?session_id=waits")) {
            List<JsonNode> shown = c.until(LifecycleTest::isApprovalRequest);
            assertThat(shown.get(shown.size() - 1).path("approval_id").asText()).as("still pending").isEqualTo(approvalId);
            c.send(Json.object().put("type", "tool_approval_response").put("approval_id", approvalId)
                    .put("approved", true).toString());
            assertThat(text(c.untilCompleted())).contains("was generated");
        }
    }

    @Test
    void theShutdownSummaryCountsActiveRunsWebSocketsAndHttpStreams() throws Exception {
        TestGateway g = TestGateway.start(dataDir);
        HttpRequest post = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.port() + "/agui"))
                .header("Content-Type", "application/json").header("Accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(AguiHttp.input(UUID.randomUUID().toString(), "slow").toString()))
                .build();
        try (LogCapture logs = LogCapture.of(GatewayServer.class); WsClient ws = g.connect("/hai/ws");
             Stream<String> sse = HttpClient.newHttpClient().send(post, HttpResponse.BodyHandlers.ofLines()).body()) {
            ws.ask("summary", "slow");
            assertThat(ws.next().path("status").asText()).isEqualTo("thinking");
            assertThat(sse.iterator().next()).as("the stream has begun").isNotEmpty();

            g.server.stop(Duration.ZERO).join();

            assertThat(logs.messages(Level.INFO))
                    .contains("Switchboard stopping: 2 active runs, 1 WebSocket and 1 HTTP stream open, grace 0s");
        }
    }

    private static boolean isApprovalRequest(JsonNode frame) {
        return frame.path("type").asText().equals("tool_approval_request");
    }
}
