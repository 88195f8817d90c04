package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import dev.switchboard.store.postgres.PostgresServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Gateways on a PostgreSQL database ({@code --store-url} alone selects it): one runs conversations
 * over real WebSockets and stops, and a new one, with a data directory of its own, goes on with
 * their history, their pending approval and their cursors.
 */
class PostgresStoreServerTest {
    @RegisterExtension
    static final PostgresServer postgres = new PostgresServer();

    @TempDir
    Path dir;

    private static List<Long> seqs(List<JsonNode> frames) {
        return frames.stream().filter(f -> f.has("seq")).map(f -> f.path("seq").asLong()).toList();
    }

    private static long lastSeq(List<JsonNode> frames) {
        List<Long> seqs = seqs(frames);
        return seqs.get(seqs.size() - 1);
    }

    @Test
    void historyAPendingApprovalAndCursorsOutliveTheGatewayOnTheDatabase() {
        Map<String, Object> options = Map.of("store-url", postgres.newDatabase());
        long firstRunEnd;
        List<JsonNode> secondRun;
        long lastBeforeStop;
        String approvalId;
        try (TestGateway g = TestGateway.start(dir.resolve("first"), options)) {
            assertThat(g.server.hub().store().getClass().getSimpleName()).isEqualTo("PostgresConversationStore");
            try (WsClient c = g.connect("/ws")) {
                firstRunEnd = lastSeq(c.ask("pg-chat", "hello").untilCompleted());
                secondRun = c.ask("pg-chat", "what are the rules for food storage?").untilCompleted();
                lastBeforeStop = lastSeq(secondRun);
                approvalId = c.ask("pg-report", "generate the report")
                        .until(f -> f.path("type").asText().equals("tool_approval_request")).stream()
                        .reduce((a, b) -> b).orElseThrow().path("approval_id").asText();
            }
        }

        try (TestGateway g = TestGateway.start(dir.resolve("second"), options)) {
            try (WsClient c = g.connect("/ws?session_id=pg-chat&last_seq=" + firstRunEnd)) {
                List<JsonNode> replay = c.until(f -> f.path("seq").asLong() == lastBeforeStop);
                assertThat(seqs(replay)).as("every event after the cursor, in order and once, as it was shown live")
                        .isEqualTo(seqs(secondRun)).allMatch(seq -> seq > firstRunEnd);
                assertThat(HaiServerTest.text(replay)).isEqualTo(HaiServerTest.text(secondRun)).contains("chilled food");

                List<JsonNode> history = c.ask("pg-chat", "history").untilCompleted();
                assertThat(HaiServerTest.text(history)).contains("2 earlier messages");
                assertThat(history.stream().filter(f -> f.has("seq")).findFirst().orElseThrow().path("seq").asLong())
                        .as("the seqs reserved before the clean stop were given back")
                        .isEqualTo(lastBeforeStop + 1);
            }
            try (WsClient c = g.connect("/ws?session_id=pg-report")) {
                c.send(Json.object().put("type", "tool_approval_response").put("approval_id", approvalId)
                        .put("approved", true).put("feedback", "after the restart").toString());
                List<JsonNode> rest = c.untilCompleted();
                assertThat(HaiServerTest.text(rest)).contains("was generated");
            }
        }
    }
}
