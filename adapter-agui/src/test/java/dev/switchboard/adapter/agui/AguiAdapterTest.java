package dev.switchboard.adapter.agui;

import dev.switchboard.core.Principal;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.HttpExchange;
import dev.switchboard.core.spi.Probe;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.spi.WireAdapter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;

import static dev.switchboard.testkit.DialectChecks.assertProvided;
import static dev.switchboard.testkit.Fixtures.fixture;
import static org.assertj.core.api.Assertions.assertThat;

class AguiAdapterTest {
    private static final SessionContext CONNECTION =
            new SessionContext("conn-1", Principal.ANONYMOUS, "/agui/ws", Map.of());

    private final WireAdapter adapter = new AguiAdapterProvider().create(AdapterContext.defaults());

    @Test
    void providerIsFoundByServiceLoader() {
        assertProvided("agui", AguiAdapterProvider.class);
    }

    @Test
    void adapterServesBothWebSocketPathsTheAgUiSubprotocolAndThePostPath() {
        assertThat(adapter.id()).isEqualTo("agui");
        assertThat(adapter.webSocketPaths()).containsExactlyInAnyOrder("/ws", "/agui/ws");
        assertThat(adapter.subprotocols()).containsExactly("ag-ui");
        assertThat(adapter.httpPaths()).containsExactly("/agui");
    }

    @Test
    void adapterLeavesUnclaimedSharedPathConnectionsToOthersAndAnswersApprovals() {
        assertThat(adapter.fallback()).isFalse();
        assertThat(adapter.answersApprovals()).isTrue();
    }

    @Test
    void webSocketConnectionsGetAProfileSessionAndPostsAStreamingExchange() {
        assertThat(adapter.newSession(CONNECTION)).isInstanceOf(AguiWsSession.class);
        HttpExchange exchange = adapter.newExchange(new SessionContext("req-1", Principal.ANONYMOUS, "/agui", Map.of()));
        assertThat(exchange).isInstanceOf(AguiHttpExchange.class);
        assertThat(exchange.streaming()).isTrue();
        assertThat(exchange.done()).isFalse();
    }

    @Test
    void eachConnectionGetsItsOwnSession() {
        assertThat(adapter.newSession(CONNECTION)).isNotSameAs(adapter.newSession(CONNECTION));
        assertThat(adapter.newExchange(CONNECTION)).isNotSameAs(adapter.newExchange(CONNECTION));
    }

    @Test
    void probeMatchesTheProfileRunAgentInputAndApprovalResponse() {
        assertThat(adapter.probe(fixture("run_agent_input.json"))).isEqualTo(Probe.MATCH);
        assertThat(adapter.probe(fixture("tool_approval_response.json"))).isEqualTo(Probe.MATCH);
    }

    @Test
    void probeMatchesTheOfficialRunAgentInput() {
        assertThat(adapter.probe(fixture("official_run_agent_input.json"))).isEqualTo(Probe.MATCH);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"threadId\":\"t1\"}",
        "{\"messages\":[]}",
        "{\"threadId\":7,\"messages\":\"not yet valid\"}",
        "{\"type\":\"CUSTOM\",\"name\":\"agora:tool_approval_response\"}",
    })
    void probeMatchesInputThatWouldFailValidation(String frame) {
        assertThat(adapter.probe(frame)).isEqualTo(Probe.MATCH);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"type\":\"user_message\",\"content\":\"hi\",\"session_id\":\"s\"}",
        "{\"type\":\"tool_approval_response\",\"approval_id\":\"a\",\"approved\":true}",
        "{\"type\":\"CUSTOM\",\"name\":\"agora:error\",\"value\":{}}",
        "{\"type\":\"RUN_STARTED\",\"runId\":\"r\"}",
        "{\"thread_id\":\"t1\"}",
        "[{\"threadId\":\"t1\"}]",
        "\"threadId\"",
        "hello",
        "{\"threadId\":\"t1\"",
        "{\"threadId\":\"t1\"} trailing",
        "",
        "null",
    })
    void probeDoesNotMatchAnythingElse(String frame) {
        assertThat(adapter.probe(frame)).isEqualTo(Probe.NO_MATCH);
    }

    @Test
    void probeNeverThrowsOnHostileInput() {
        assertThat(adapter.probe("[".repeat(10_000))).isEqualTo(Probe.NO_MATCH);
        assertThat(adapter.probe("{\"threadId\":\"t1\",\"n\":" + "1".repeat(1000) + "}")).isEqualTo(Probe.NO_MATCH);
        assertThat(adapter.probe(null)).isEqualTo(Probe.NO_MATCH);
    }
}
