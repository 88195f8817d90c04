package dev.switchboard.adapter.agentscope;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.switchboard.core.Principal;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.HttpExchange;
import dev.switchboard.core.spi.SessionContext;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static dev.switchboard.testkit.DialectChecks.assertDecodesToCommandsOrATypedFailure;

/** Coverage-guided fuzzing of the AgentScope request decoder: any body is commands or a typed failure. */
class AgentScopeFuzzTest {
    /** The input is the bytes a client sends, decoded as UTF-8 as the transport decodes them. */
    @FuzzTest(maxDuration = "10s")
    void anyBodyDecodesToCommandsOrATypedFailure(byte[] data) throws Exception {
        HttpExchange exchange = new AgentScopeAdapterProvider().create(AdapterContext.defaults())
                .newExchange(new SessionContext("fuzz", Principal.ANONYMOUS, "/process", Map.of()));
        assertDecodesToCommandsOrATypedFailure(exchange, new String(data, StandardCharsets.UTF_8));
    }
}
