package dev.switchboard.adapter.agui;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.switchboard.core.Principal;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.spi.WireAdapter;
import dev.switchboard.core.testing.CollectingFrameWriter;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

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
        var ws = adapter.newSession(ctx);
        Decoded fromWs = ws.decode(text);
        assertThat(fromWs).isNotNull();
        var http = adapter.newExchange(ctx);
        Decoded fromHttp = http.decode(text);
        assertThat(fromHttp).isNotNull();
        if (fromHttp instanceof Decoded.Failure f) {
            CollectingFrameWriter out = new CollectingFrameWriter();
            http.encodeError(f.error(), out);
            assertThat(out.json()).hasSize(1);
        }
    }
}
