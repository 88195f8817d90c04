package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.ApprovalRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** kill -9 in the middle of runs and with an A2H call waiting, then a restart on the same data directory. */
class CrashRecoveryTest {
    @TempDir
    Path dir;

    /** A call to the A2H endpoints from this machine (served without a key): a POST with the body, else a GET. */
    private static HttpResponse<String> a2h(int port, String path, JsonNode body) throws Exception {
        var b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/humanlayer/v1" + path))
                .timeout(Duration.ofSeconds(10));
        if (body != null) {
            b.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.toString()));
        }
        return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void afterKillNineEverythingSeenIsStoredTheRunIsFailedAndApprovalsStayAnswerable() throws Exception {
        Path data = dir.resolve("data");
        java.nio.file.Files.createDirectories(data);
        ChildGateway child = ChildGateway.start(data, ChildGateway.freePort(), dir.resolve("child.log"), List.of(),
                "--demo-delay-ms", "50");
        int port = child.port;
        List<String> seen = new ArrayList<>();
        String approvalId;
        // An agent's A2H call, waiting for a person when the gateway dies.
        assertThat(a2h(port, "/function_calls", A2hServerTest.functionCall("crash-call", "send_email", null))
                .statusCode()).isBetween(200, 201);
        try (WsClient streaming = WsClient.connect(port, "/hai/ws"); WsClient approving = WsClient.connect(port, "/hai/ws")) {
            JsonNode request = approving.ask("crash-b", "please write the report")
                    .until(f -> f.path("type").asText().equals("tool_approval_request")).stream()
                    .reduce((a, b) -> b).orElseThrow();
            approvalId = request.path("approval_id").asText();
            streaming.ask("crash-a", "slow please");
            for (JsonNode f : streaming.until(f -> f.path("content").asText().startsWith("chunk 5 "))) {
                if (f.path("type").asText().equals("assistant_message_chunk")) {
                    seen.add(f.path("content").asText());
                }
            }
            child.kill();
        } finally {
            child.process.destroyForcibly();
        }

        try (TestGateway g = TestGateway.start(data)) {
            List<Envelope> log = g.server.hub().store().events("crash-a", 0, 10_000);
            List<String> stored = log.stream().filter(e -> e.event() instanceof Event.TextDelta)
                    .map(e -> ((Event.TextDelta) e.event()).delta()).toList();
            assertThat(stored).as("every chunk a client saw was stored first").containsAll(seen);
            for (int i = 0; i < log.size(); i++) {
                assertThat(log.get(i).seq()).isEqualTo(i + 1);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!(g.server.hub().store().events("crash-a", 0, 10_000).get(
                    g.server.hub().store().events("crash-a", 0, 10_000).size() - 1).event() instanceof Event.RunFailed)) {
                assertThat(System.nanoTime()).as("the interrupted run is marked failed").isLessThan(deadline);
                Thread.sleep(20);
            }
            List<Envelope> after = g.server.hub().store().events("crash-a", 0, 10_000);
            Event.RunFailed failed = (Event.RunFailed) after.get(after.size() - 1).event();
            assertThat(failed.code()).isEqualTo(ErrorCode.UNAVAILABLE);
            assertThat(after.get(after.size() - 1).runId()).isEqualTo(log.get(0).runId());

            assertThat(g.server.hub().store().approval(approvalId)).get().extracting(ApprovalRecord::status)
                    .isEqualTo(ApprovalRecord.Status.PENDING);
            assertThat(g.server.hub().decideAsOperator(approvalId, true, "after the crash", null,
                    dev.switchboard.core.Principal.of("operator")).get(5, TimeUnit.SECONDS)).isNull();
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (g.server.hub().store().messages("crash-b").stream().noneMatch(m -> m.content().contains("was generated"))) {
                assertThat(System.nanoTime()).as("the report run continued after the restart").isLessThan(deadline);
                Thread.sleep(20);
            }

            // The A2H call is still pending, and answerable.
            JsonNode pending = Json.MAPPER.readTree(a2h(g.port(), "/agent/function_calls/pending", null).body());
            assertThat(pending.path("items")).extracting(i -> i.path("call_id").asText()).contains("crash-call");
            assertThat(a2h(g.port(), "/agent/function_calls/crash-call/respond",
                    Json.object().put("approved", true).put("comment", "after the crash")).statusCode()).isEqualTo(200);
            JsonNode call = Json.MAPPER.readTree(a2h(g.port(), "/function_calls/crash-call", null).body());
            assertThat(call.at("/status/approved").asBoolean()).isTrue();
            assertThat(call.at("/status/comment").asText()).isEqualTo("after the crash");
        }
    }
}
