package dev.switchboard.bench;

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
}
