package com.example.jsonl;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.Settings;
import dev.switchboard.core.spi.WireAdapter;
import dev.switchboard.testkit.DialectChecks;
import dev.switchboard.testkit.EmbeddedSession;
import dev.switchboard.testkit.FieldCases;
import dev.switchboard.testkit.MalformedJson;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The dialect's translation, without sockets: frames in, commands out; events in, frames out. The
 * tables of bad input every JSON dialect must refuse come from Switchboard's test kit.
 */
class JsonlSessionTest {
    private static final String MESSAGE = "{\"type\":\"message\",\"conversation\":\"c1\",\"text\":\"hello\"}";
    private static final String DECIDE = "{\"type\":\"decide\",\"approval\":\"ap_1\",\"approved\":true,\"feedback\":\"ok\"}";

    private final EmbeddedSession<JsonlSession> session = new EmbeddedSession<>(new JsonlSession(100), 0, 1);

    @Test
    void aMessageStartsARunWithOneUserMessage() {
        Command.StartRun run = (Command.StartRun) only(session.decode(MESSAGE));
        assertEquals("c1", run.conversationId());
        assertEquals("hello", run.messages().get(0).content());
    }

    @Test
    void joinDecideCancelAndPingBecomeTheirCommands() {
        assertEquals(new Command.Subscribe("c1", 12, true),
                only(session.decode("{\"type\":\"join\",\"conversation\":\"c1\",\"after\":12}")));
        assertEquals(new Command.Subscribe("c1", -1, true),
                only(session.decode("{\"type\":\"join\",\"conversation\":\"c1\"}")));
        assertEquals(new Command.DecideApproval("ap_1", true, "ok", null), only(session.decode(DECIDE)));
        assertEquals(new Command.CancelRun("c1", null), only(session.decode("{\"type\":\"cancel\",\"conversation\":\"c1\"}")));
        assertInstanceOf(Command.Ping.class, only(session.decode("{\"type\":\"ping\"}")));
    }

    @TestFactory
    Stream<DynamicTest> textThatIsNotOneJsonObjectIsRefused() {
        return MalformedJson.refusedBy(MESSAGE, "a message must be one JSON object", session::decode);
    }

    @TestFactory
    Stream<DynamicTest> eachFieldMissingOrOfTheWrongTypeIsRefusedNamingIt() {
        return Stream.concat(
                FieldCases.in(MESSAGE).requiredString("type").requiredId("conversation").requiredString("text")
                        .refusedBy(session::decode),
                FieldCases.in(DECIDE).requiredId("approval").requiredBoolean("approved").optionalString("feedback")
                        .refusedBy(session::decode));
    }

    @Test
    void valuesOutOfRangeAndUnknownTypesAreRefused() throws java.io.IOException {
        FieldCases.assertRefused(session.decode("{\"type\":\"message\",\"conversation\":\"c1\",\"text\":\""
                + "x".repeat(101) + "\"}"), ErrorCode.INVALID_FIELD, "text");
        FieldCases.assertRefused(session.decode("{\"type\":\"join\",\"conversation\":\"c1\",\"after\":-3}"),
                ErrorCode.INVALID_FIELD, "after");
        GatewayError unknown = assertInstanceOf(Decoded.Failure.class, session.decode("{\"type\":\"dance\"}")).error();
        assertEquals(ErrorCode.UNKNOWN_TYPE, unknown.code());
        DialectChecks.assertLongUnknownTypeIsShortenedWhenEchoed(session.session());
        // Whatever arrives decodes to commands or to a typed failure, never an exception.
        DialectChecks.assertDecodesToCommandsOrATypedFailure(session.session(), "{\"type\":\"join\",\"after\":1e400}");
    }

    @Test
    void eachEventIsOneObjectNamedAfterItsKind() {
        List<JsonNode> frames = session.encode("c1", "r1", new Event.TextDelta("m1", "Hel"), new Event.RunFinished(),
                new Event.RunFailed(ErrorCode.UNAVAILABLE, "gone"));
        assertEquals("{\"type\":\"text_delta\",\"conversation\":\"c1\",\"run\":\"r1\",\"message\":\"m1\",\"delta\":\"Hel\"}",
                frames.get(0).toString());
        assertEquals("{\"type\":\"run_finished\",\"conversation\":\"c1\",\"run\":\"r1\"}", frames.get(1).toString());
        assertEquals("{\"type\":\"run_failed\",\"conversation\":\"c1\",\"run\":\"r1\",\"code\":\""
                + ErrorCode.UNAVAILABLE.wireCode() + "\",\"message\":\"gone\"}", frames.get(2).toString());
    }

    @Test
    void anErrorCarriesItsCodeAndField() {
        JsonNode error = session.encodeError(GatewayError.field(ErrorCode.MISSING_FIELD, "text", "text is required"))
                .get(0);
        assertEquals("error", error.get("type").asText());
        assertEquals(ErrorCode.MISSING_FIELD.wireCode(), error.get("code").asText());
        assertEquals("text", error.get("field").asText());
        assertEquals("pong", session.pong().get(0).get("type").asText());
    }

    @Test
    void theProviderIsFoundAndServesThePathItsOptionNames() {
        DialectChecks.assertProvided("jsonl", JsonlAdapterProvider.class);
        JsonlAdapterProvider provider = new JsonlAdapterProvider();
        assertEquals(Set.of("/jsonl"), provider.create(AdapterContext.defaults()).webSocketPaths());
        Settings settings = key -> key.equals("jsonl-path") ? Optional.of("/lines") : Optional.empty();
        WireAdapter adapter = provider.create(AdapterContext.defaults().withSettings(settings));
        assertEquals(Set.of("/lines"), adapter.webSocketPaths());
        assertNull(JsonlAdapterProvider.PATH.problem("/lines"));
        assertNotNull(JsonlAdapterProvider.PATH.problem("lines"));
    }

    private static Command only(Decoded decoded) {
        Decoded.Commands commands = assertInstanceOf(Decoded.Commands.class, decoded);
        assertEquals(1, commands.commands().size());
        return commands.commands().get(0);
    }
}
