package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The demo agent's {@code benchmark <n>} trigger, the load generator's workload, over a real socket. */
class DemoBenchmarkTest {
    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension();

    private static List<String> types(List<JsonNode> frames) {
        return frames.stream().map(f -> f.path("type").asText()).toList();
    }

    @Test
    void benchmarkStreamsOneMessageOfNIdenticalChunksAndNothingElse() {
        String session = UUID.randomUUID().toString();
        try (WsClient c = gateway.connect("/hai/ws")) {
            List<JsonNode> frames = c.ask(session, "benchmark 25").untilCompleted();

            assertThat(frames).hasSize(1 + 25 + 1 + 1);
            assertThat(frames.get(0).path("status").asText()).isEqualTo("thinking");
            List<JsonNode> chunks = frames.subList(1, 26);
            assertThat(chunks).allSatisfy(ch -> {
                assertThat(ch.path("type").asText()).isEqualTo("assistant_message_chunk");
                assertThat(ch.path("content").asText()).isEqualTo("token ");
                assertThat(ch.path("is_final").asBoolean()).isFalse();
                assertThat(ch.path("message_id").asText()).isEqualTo(chunks.get(0).path("message_id").asText());
            });
            JsonNode last = frames.get(26);
            assertThat(last.path("is_final").asBoolean()).isTrue();
            assertThat(last.path("content").asText()).isEmpty();
            assertThat(last.has("metadata")).as("no citations").isFalse();
        }
    }

    @Test
    void benchmarkOnTheAguiWebSocketIsTheRunFramingAroundNContentEvents() {
        try (WsClient c = gateway.connect("/agui/ws")) {
            c.send(Json.object().put("threadId", UUID.randomUUID().toString()).put("runId", "r1")
                    .set("messages", Json.MAPPER.createArrayNode().add(Json.object().put("id", "m1")
                            .put("role", "user").put("content", "Benchmark 3"))).toString());
            List<JsonNode> frames = c.until(f -> f.path("type").asText().equals("RUN_FINISHED"));

            List<String> expected = new ArrayList<>(List.of("RUN_STARTED", "STATE_SNAPSHOT", "TEXT_MESSAGE_START"));
            expected.addAll(Collections.nCopies(3, "TEXT_MESSAGE_CONTENT"));
            expected.addAll(List.of("TEXT_MESSAGE_END", "STATE_SNAPSHOT", "RUN_FINISHED"));
            assertThat(types(frames)).containsExactlyElementsOf(expected);
        }
    }

    @Test
    void benchmarkOutsideOneToOneHundredThousandAnswersWithTheRangeInstead() {
        for (String ask : List.of("benchmark 0", "benchmark 100001", "benchmark 99999999999999")) {
            try (WsClient c = gateway.connect("/hai/ws")) {
                List<JsonNode> frames = c.ask(UUID.randomUUID().toString(), ask).untilCompleted();

                String text = frames.stream().map(f -> f.path("content").asText("")).reduce("", String::concat);
                assertThat(text).as(ask).isEqualTo("benchmark takes a number of chunks from 1 to 100000.");
            }
        }
    }

    @Test
    void aMessageThatOnlyMentionsBenchmarkGetsThePlainAnswer() {
        try (WsClient c = gateway.connect("/hai/ws")) {
            List<JsonNode> frames = c.ask(UUID.randomUUID().toString(), "benchmark the fridge please").untilCompleted();

            String text = frames.stream().map(f -> f.path("content").asText("")).reduce("", String::concat);
            assertThat(text).contains("chilled food");
        }
    }
}
