package dev.switchboard.adapter.agentscope;

import dev.switchboard.core.Principal;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.HttpExchange;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.spi.WireAdapter;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static dev.switchboard.testkit.DialectChecks.assertProvided;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AgentScopeAdapterTest {
    private static final SessionContext REQUEST =
            new SessionContext("req-1", Principal.ANONYMOUS, "/process", Map.of());

    private final WireAdapter adapter = new AgentScopeAdapterProvider().create(AdapterContext.defaults());

    @Test
    void providerIsFoundByServiceLoader() {
        assertProvided("agentscope", AgentScopeAdapterProvider.class);
    }

    @Test
    void adapterServesThePostPathOnlyAndAnswersApprovals() {
        assertThat(adapter.id()).isEqualTo("agentscope");
        assertThat(adapter.httpPaths()).containsExactly("/process");
        assertThat(adapter.webSocketPaths()).isEmpty();
        assertThat(adapter.subprotocols()).isEmpty();
        assertThat(adapter.fallback()).isFalse();
        assertThat(adapter.answersApprovals()).isTrue();
    }

    @Test
    void eachRequestGetsItsOwnExchangeWhichStreamsUntilItsBodySaysOtherwise() {
        HttpExchange exchange = adapter.newExchange(REQUEST);

        assertThat(exchange).isInstanceOf(AgentScopeExchange.class).isNotSameAs(adapter.newExchange(REQUEST));
        assertThat(exchange.streaming()).isTrue();
        assertThat(exchange.done()).isFalse();
    }

    @Test
    void thereIsNoWebSocketSession() {
        assertThatThrownBy(() -> adapter.newSession(REQUEST)).isInstanceOf(UnsupportedOperationException.class);
    }
}
