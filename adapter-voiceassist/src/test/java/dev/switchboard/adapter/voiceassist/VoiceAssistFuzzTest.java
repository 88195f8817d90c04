package dev.switchboard.adapter.voiceassist;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.switchboard.core.Principal;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.SessionContext;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static dev.switchboard.testkit.DialectChecks.assertDecodesToCommandsOrATypedFailure;

/** Coverage-guided fuzzing of the VoiceAssist decoder: any text is a command or a typed failure, never an exception. */
class VoiceAssistFuzzTest {
    private final DialectSession session = new VoiceAssistAdapterProvider().create(AdapterContext.defaults())
            .newSession(new SessionContext("fuzz", Principal.ANONYMOUS, "/api/realtime/ws",
                    Map.of("conversationId", List.of("c1"))));

    /** The input is the bytes a client sends, decoded as UTF-8 as the transport decodes them. */
    @FuzzTest(maxDuration = "10s")
    void anyFrameDecodesToCommandsOrATypedFailure(byte[] data) throws Exception {
        assertDecodesToCommandsOrATypedFailure(session, new String(data, StandardCharsets.UTF_8));
    }
}
