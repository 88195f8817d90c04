package dev.switchboard.adapter.agui;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.switchboard.core.Principal;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.spi.WireAdapter;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static dev.switchboard.testkit.DialectChecks.assertDecodesToCommandsOrATypedFailure;

/**
 * Coverage-guided fuzzing of both AG-UI decoders (the WebSocket profile's and the HTTP body's):
 * any text is commands or a typed failure, never an exception.
 */
class AguiFuzzTest {
    private final WireAdapter adapter = new AguiAdapterProvider().create(AdapterContext.defaults());
    private final SessionContext ctx = new SessionContext("fuzz", Principal.ANONYMOUS, "/agui", Map.of());

    /** The input is the bytes a client sends, decoded as UTF-8 as the transport decodes them. */
    @FuzzTest(maxDuration = "10s")
    void anyInputDecodesToCommandsOrATypedFailureOnBothTransports(byte[] data) throws Exception {
        String text = new String(data, StandardCharsets.UTF_8);
        assertDecodesToCommandsOrATypedFailure(adapter.newSession(ctx), text);
        assertDecodesToCommandsOrATypedFailure(adapter.newExchange(ctx), text);
    }
}
