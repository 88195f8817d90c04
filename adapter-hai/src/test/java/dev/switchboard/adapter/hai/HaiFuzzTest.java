package dev.switchboard.adapter.hai;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.switchboard.core.Principal;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.testing.CollectingFrameWriter;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Coverage-guided fuzzing of the HAI decoder: any text is a command or a typed failure, never an exception. */
class HaiFuzzTest {
    private final DialectSession session = new HaiAdapterProvider().create(AdapterContext.defaults())
            .newSession(new SessionContext("fuzz", Principal.ANONYMOUS, "/hai/ws", Map.of()));

    @FuzzTest(maxDuration = "10s")
    void anyFrameDecodesToCommandsOrATypedFailure(FuzzedDataProvider data) throws Exception {
        Decoded decoded = session.decode(data.consumeRemainingAsString());
        assertThat(decoded).isNotNull();
        if (decoded instanceof Decoded.Failure f) {
            CollectingFrameWriter out = new CollectingFrameWriter();
            session.encodeError(f.error(), out);
            assertThat(out.json()).hasSize(1);
        }
    }
}
