package dev.switchboard.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class LlmClientTest {

    @Test
    void directConversationsTimeEveryTokenOfEveryAnswer() throws Exception {
        try (ScriptedModel model = ScriptedModel.start(20)) {
            LlmClient.Result r = new LlmClient().run(LlmClient.Path.DIRECT, model.port(), 3, 2, 20, 0, Duration.ZERO,
                    Duration.ofSeconds(20));

            assertThat(r.timedOut()).isFalse();
            assertThat(r.errors()).isZero();
            assertThat(r.answers()).isEqualTo(6);
            assertThat(r.tokensReceived()).isEqualTo(120);
            assertThat(r.ttft().getTotalCount()).isEqualTo(6);
            assertThat(r.perToken().getTotalCount()).isEqualTo(120);
            assertThat(r.ttft().getMaxValue()).isLessThan(Duration.ofSeconds(10).toNanos());
        }
    }

    @Test
    void anAnswerShortOfItsTokensIsAnError() throws Exception {
        try (ScriptedModel model = ScriptedModel.start(5)) {
            LlmClient.Result r = new LlmClient().run(LlmClient.Path.DIRECT, model.port(), 1, 2, 6, 0, Duration.ZERO,
                    Duration.ofSeconds(20));

            assertThat(r.answers()).isZero();
            assertThat(r.errors()).isEqualTo(2);
        }
    }

    @Test
    void followUpsAreTheTurnsOfOneConversationAfterAFirstThatIsNotCounted() throws Exception {
        try (ScriptedModel model = ScriptedModel.start(20)) {
            LlmClient.Result r = new LlmClient().run(LlmClient.Path.DIRECT, model.port(), 1, 2, 20, 0, Duration.ZERO,
                    Duration.ofSeconds(20), true);

            assertThat(r.followUps()).isTrue();
            assertThat(r.errors()).isZero();
            assertThat(r.answers()).as("the first turn is not counted").isEqualTo(2);
            assertThat(r.ttft().getTotalCount()).isEqualTo(2);
            assertThat(r.perToken().getTotalCount()).isEqualTo(40);
            assertThat(r.tokensReceived()).as("every token the model sent, for CPU per token").isEqualTo(60);
            JsonNode messages = Json.MAPPER.readTree(model.lastRequest()).get("messages");
            assertThat(messages).hasSize(5);
            assertThat(messages.findValuesAsText("role")).containsExactly("user", "assistant", "user", "assistant", "user");
            assertThat(messages.get(1).get("content").asText().split(" ")).as("an earlier answer, as it came")
                    .hasSize(20).allMatch(t -> t.matches("[0-9]+"));
        }
    }
}
