package dev.switchboard.adapter.hai;

import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Probe;
import dev.switchboard.core.spi.WireAdapter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static dev.switchboard.testkit.DialectChecks.assertProvided;
import static dev.switchboard.testkit.Fixtures.fixture;
import static org.assertj.core.api.Assertions.assertThat;

class HaiAdapterTest {
    private final WireAdapter adapter = new HaiAdapterProvider().create(AdapterContext.defaults());

    @Test
    void providerIsFoundByServiceLoader() {
        assertProvided("hai", HaiAdapterProvider.class);
    }

    @Test
    void adapterServesBothHaiPathsAndTheHaiSubprotocol() {
        assertThat(adapter.id()).isEqualTo("hai");
        assertThat(adapter.webSocketPaths()).containsExactlyInAnyOrder("/ws", "/hai/ws");
        assertThat(adapter.subprotocols()).containsExactly("hai");
    }

    @Test
    void adapterTakesUnclaimedSharedPathConnectionsAndAnswersApprovals() {
        assertThat(adapter.fallback()).isTrue();
        assertThat(adapter.answersApprovals()).isTrue();
    }

    @Test
    void probeMatchesTheSpecUserMessage() {
        assertThat(adapter.probe(fixture("user_message.json"))).isEqualTo(Probe.MATCH);
    }

    @Test
    void probeMatchesTheSpecApprovalResponse() {
        assertThat(adapter.probe(fixture("tool_approval_response_approved.json"))).isEqualTo(Probe.MATCH);
    }

    @Test
    void probeMatchesAUserMessageThatWouldFailValidation() {
        assertThat(adapter.probe("{\"type\":\"user_message\"}")).isEqualTo(Probe.MATCH);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"type\":\"status\",\"status\":\"thinking\"}",
        "{\"threadId\":\"t1\",\"runId\":\"r1\",\"messages\":[],\"tools\":[],\"context\":[],\"state\":{}}",
        "{\"type\":\"message\",\"content\":\"hi\",\"session_id\":\"s\"}",
        "{\"type\":7}",
        "{\"payload\":{\"type\":\"user_message\"}}",
        "[{\"type\":\"user_message\"}]",
        "\"user_message\"",
        "hello",
        "{\"type\":\"user_message\"",
        "{\"type\":\"user_message\"} trailing",
        "",
        "null",
    })
    void probeDoesNotMatchAnythingElse(String frame) {
        assertThat(adapter.probe(frame)).isEqualTo(Probe.NO_MATCH);
    }

    @Test
    void probeNeverThrowsOnHostileInput() {
        assertThat(adapter.probe("[".repeat(10_000))).isEqualTo(Probe.NO_MATCH);
        assertThat(adapter.probe("{\"type\":\"user_message\",\"n\":" + "1".repeat(1000) + "}"))
                .isEqualTo(Probe.NO_MATCH);
        assertThat(adapter.probe(null)).isEqualTo(Probe.NO_MATCH);
    }
}
