package dev.switchboard.adapter.voiceassist;

import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Principal;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.spi.WireAdapter;
import dev.switchboard.testkit.CollectingFrameWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.util.List;
import java.util.Map;

import static dev.switchboard.adapter.voiceassist.VoiceAssistTesting.TIMESTAMP;
import static dev.switchboard.testkit.DialectChecks.assertProvided;
import static dev.switchboard.testkit.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

class VoiceAssistAdapterTest {
    private final WireAdapter adapter = new VoiceAssistAdapterProvider().create(AdapterContext.defaults());

    private static SessionContext upgrade(Map<String, List<String>> query) {
        return new SessionContext("conn_1", Principal.ANONYMOUS, "/api/realtime/ws", query);
    }

    private static SessionContext upgrade(String conversationId) {
        return upgrade(Map.of("conversationId", List.of(conversationId),
                "token", List.of("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9")));
    }

    @Test
    void providerIsFoundByServiceLoader() {
        assertProvided("voiceassist", VoiceAssistAdapterProvider.class);
    }

    @Test
    void adapterServesTheRealtimePathWithoutSubprotocolsOrFallback() {
        assertThat(adapter.id()).isEqualTo("voiceassist");
        assertThat(adapter.webSocketPaths()).containsExactly("/api/realtime/ws");
        assertThat(adapter.subprotocols()).isEmpty();
        assertThat(adapter.fallback()).isFalse();
    }

    @Test
    void adapterCannotAnswerApprovals() {
        assertThat(adapter.answersApprovals()).isFalse();
    }

    @Test
    void upgradeWithTheSpecConversationIdAndTokenIsAccepted() {
        assertThat(adapter.refuseUpgrade(upgrade("550e8400-e29b-41d4-a716-446655440000"))).isNull();
    }

    @Test
    void upgradeWithAConversationIdThatIsNoUuidIsAccepted() {
        assertThat(adapter.refuseUpgrade(upgrade("test"))).isNull();
    }

    @Test
    void upgradeWithoutConversationIdIsRefusedAsMissing() {
        GatewayError error = adapter.refuseUpgrade(upgrade(Map.of("token", List.of("t"))));

        assertThat(error.code()).isEqualTo(ErrorCode.MISSING_FIELD);
        assertThat(error.details()).isEqualTo(Map.of("field", "conversationId"));
        assertThat(error.message()).contains("conversationId", "/api/realtime/ws?conversationId=");
    }

    @Test
    void upgradeWithoutAnyQueryIsRefusedAsMissing() {
        assertThat(adapter.refuseUpgrade(upgrade(Map.of())).code()).isEqualTo(ErrorCode.MISSING_FIELD);
    }

    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(strings = {"", " ", "\t\n", "\u00a0\u2003"})
    void upgradeWithABlankConversationIdIsRefusedAsMissing(String blank) {
        GatewayError error = adapter.refuseUpgrade(upgrade(blank));

        assertThat(error.code()).isEqualTo(ErrorCode.MISSING_FIELD);
        assertThat(error.details()).isEqualTo(Map.of("field", "conversationId"));
    }

    @Test
    void upgradeWithAConversationIdOf128CharactersIsAccepted() {
        assertThat(adapter.refuseUpgrade(upgrade("c".repeat(128)))).isNull();
        assertThat(adapter.refuseUpgrade(upgrade("\uD83D\uDE00".repeat(128)))).isNull();
    }

    @Test
    void upgradeWithAConversationIdOver128CharactersIsRefusedAsInvalid() {
        GatewayError error = adapter.refuseUpgrade(upgrade("c".repeat(129)));

        assertThat(error.code()).isEqualTo(ErrorCode.INVALID_FIELD);
        assertThat(error.details()).isEqualTo(Map.of("field", "conversationId"));
        assertThat(error.message()).contains("conversationId", "128");
    }

    @Test
    void sessionSendsConnectedFirstWithTheConnectionIdAsClientId() throws IOException {
        DialectSession session = adapter.newSession(upgrade("conv-1"));
        CollectingFrameWriter out = new CollectingFrameWriter();

        session.opened(out);

        assertThat(out.json()).singleElement().satisfies(connected -> {
            assertThat(connected.get("type").textValue()).isEqualTo("connected");
            assertThat(connected.get("client_id").textValue()).isEqualTo("conn_1");
            assertThat(connected.get("timestamp").textValue()).matches(TIMESTAMP);
            assertThat(connected.get("protocol_version").textValue()).isEqualTo("1.0");
            assertThat(connected.get("capabilities")).isEqualTo(json("[\"text_streaming\"]"));
            assertThat(connected.properties()).extracting(Map.Entry::getKey)
                    .containsExactly("type", "client_id", "timestamp", "protocol_version", "capabilities");
        });
    }

    @Test
    void sessionJoinsTheUrlConversationLiveWithoutPendingApprovals() {
        assertThat(adapter.newSession(upgrade("conv-1")).openingCommands())
                .containsExactly(Command.Subscribe.live("conv-1"));
    }

    @Test
    void sessionOfAnUpgradeThatShouldHaveBeenRefusedJoinsNothingAndNeedsSessionIdInMessages() {
        DialectSession session = adapter.newSession(upgrade(Map.of()));

        assertThat(session.openingCommands()).isEmpty();
        assertThat(session.decode("{\"type\":\"message\",\"content\":\"hi\"}"))
                .isInstanceOfSatisfying(Decoded.Failure.class, f -> {
                    assertThat(f.error().code()).isEqualTo(ErrorCode.MISSING_FIELD);
                    assertThat(f.error().details()).isEqualTo(Map.of("field", "session_id"));
                });
        assertThat(session.decode("{\"type\":\"message\",\"content\":\"hi\",\"session_id\":\"s\"}"))
                .isInstanceOfSatisfying(Decoded.Commands.class, c -> assertThat(c.commands()).singleElement()
                        .isInstanceOfSatisfying(Command.StartRun.class,
                                run -> assertThat(run.conversationId()).isEqualTo("s")));
    }

    @Test
    void sessionContentLimitComesFromTheAdapterContext() {
        DialectSession session = new VoiceAssistAdapterProvider().create(new AdapterContext(5))
                .newSession(upgrade("conv-1"));

        assertThat(session.decode("{\"type\":\"message\",\"content\":\"abcdef\"}"))
                .isInstanceOfSatisfying(Decoded.Failure.class, f -> {
                    assertThat(f.error().code()).isEqualTo(ErrorCode.INVALID_FIELD);
                    assertThat(f.error().message()).contains("content", "5");
                });
    }
}
