package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

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
        TestGateway g = TestGateway.start(dataDir, Map.of(GatewayConfig.Option.DEMO_DELAY_MS, 20));
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
}
