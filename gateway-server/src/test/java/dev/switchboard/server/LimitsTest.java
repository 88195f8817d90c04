package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocketHandshakeException;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** Rate limits on runs and limits on connections, per client and in all. */
class LimitsTest {
    @TempDir
    Path dir;

    @Test
    void runsPastTheLimitGetEachDialectsRateLimitError() throws Exception {
        try (TestGateway g = TestGateway.start(dir, Map.of("rate-limit-runs-per-minute", 2));
             WsClient hai = g.connect("/hai/ws")) {
            hai.ask("a", "one").untilCompleted();
            hai.ask("b", "two").untilCompleted();
            JsonNode refused = hai.ask("c", "three").next();
            assertThat(refused.path("error_code").asText()).isEqualTo("rate_limit_exceeded");

            HttpResponse<String> process = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + g.port() + "/process"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"input\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(process.statusCode()).isEqualTo(429);
            assertThat(process.headers().firstValue("retry-after")).isPresent();
            assertThat(Json.MAPPER.readTree(process.body()).path("error").path("code").asText())
                    .isEqualTo("rate_limit_exceeded");

            try (WsClient voice = g.connect("/api/realtime/ws?conversationId=v1")) {
                voice.next();
                JsonNode quota = voice.send("{\"type\":\"message\",\"content\":\"hi\"}").next();
                assertThat(quota.path("error").path("code").asText()).isEqualTo("QUOTA_EXCEEDED");
            }
        }
    }

    @Test
    void aClientPastItsConnectionLimitIsRefusedWith429() {
        try (TestGateway g = TestGateway.start(dir, Map.of("max-connections-per-client", 2));
             WsClient one = g.connect("/ws"); WsClient two = g.connect("/ws")) {
            Throwable t = catchThrowable(() -> g.connect("/ws").close());
            assertThat(t).hasCauseInstanceOf(WebSocketHandshakeException.class);
            assertThat(((WebSocketHandshakeException) t.getCause()).getResponse().statusCode()).isEqualTo(429);
            two.close();
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (true) {
                try (WsClient again = g.connect("/ws")) {
                    break;
                } catch (RuntimeException stillCounted) {
                    assertThat(System.nanoTime()).as("the closed connection's place is given back").isLessThan(deadline);
                }
            }
        }
    }

    @Test
    void pastTheTotalConnectionLimitRequestsGet429ButHealthStillAnswers() throws Exception {
        try (TestGateway g = TestGateway.start(dir, Map.of("max-connections", 1));
             WsClient held = g.connect("/ws")) {
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> refused = http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + g.port() + "/process"))
                    .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(refused.statusCode()).isEqualTo(429);
            HttpResponse<String> health = http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + g.port() + "/healthz")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
        }
    }
}
