package com.example.jsonl;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Command;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.FrameWriter;
import dev.switchboard.core.spi.Settings;
import dev.switchboard.core.spi.WireAdapter;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The dialect's translation, without sockets: frames in, commands out; events in, frames out. */
class JsonlSessionTest {
    private final JsonlSession session = new JsonlSession(100);

    @Test
    void aMessageStartsARunWithOneUserMessage() {
        Command.StartRun run = (Command.StartRun) only(session.decode(
                "{\"type\":\"message\",\"conversation\":\"c1\",\"text\":\"hello\"}"));
        assertEquals("c1", run.conversationId());
        assertEquals("hello", run.messages().get(0).content());
    }

    @Test
    void joinDecideCancelAndPingBecomeTheirCommands() {
        assertEquals(new Command.Subscribe("c1", 12, true),
                only(session.decode("{\"type\":\"join\",\"conversation\":\"c1\",\"after\":12}")));
        assertEquals(new Command.Subscribe("c1", -1, true),
                only(session.decode("{\"type\":\"join\",\"conversation\":\"c1\"}")));
        assertEquals(new Command.DecideApproval("ap_1", false, "not now", null),
                only(session.decode("{\"type\":\"decide\",\"approval\":\"ap_1\",\"approved\":false,\"feedback\":\"not now\"}")));
        assertEquals(new Command.CancelRun("c1", null), only(session.decode("{\"type\":\"cancel\",\"conversation\":\"c1\"}")));
        assertInstanceOf(Command.Ping.class, only(session.decode("{\"type\":\"ping\"}")));
    }

    @Test
    void badInputIsAFailureNamingTheFieldNeverAnException() {
        assertFailure("not json", ErrorCode.INVALID_JSON, null);
        assertFailure("[1,2]", ErrorCode.INVALID_JSON, null);
        assertFailure("{\"type\":\"dance\"}", ErrorCode.UNKNOWN_TYPE, null);
        assertFailure("{\"conversation\":\"c1\"}", ErrorCode.MISSING_FIELD, "type");
        assertFailure("{\"type\":\"message\",\"text\":\"hi\"}", ErrorCode.MISSING_FIELD, "conversation");
        assertFailure("{\"type\":\"message\",\"conversation\":\"c1\",\"text\":\"" + "x".repeat(101) + "\"}",
                ErrorCode.INVALID_FIELD, "text");
        assertFailure("{\"type\":\"join\",\"conversation\":\"c1\",\"after\":-3}", ErrorCode.INVALID_FIELD, "after");
        assertFailure("{\"type\":\"decide\",\"approval\":\"ap_1\",\"approved\":\"yes\"}", ErrorCode.INVALID_FIELD,
                "approved");
    }

    @Test
    void eachEventIsOneObjectNamedAfterItsKind() throws IOException {
        assertEquals("{\"type\":\"text_delta\",\"conversation\":\"c1\",\"run\":\"r1\",\"message\":\"m1\",\"delta\":\"Hel\"}",
                encode(new Event.TextDelta("m1", "Hel")));
        assertEquals("{\"type\":\"run_finished\",\"conversation\":\"c1\",\"run\":\"r1\"}",
                encode(new Event.RunFinished()));
        assertEquals("{\"type\":\"run_failed\",\"conversation\":\"c1\",\"run\":\"r1\",\"code\":\"unavailable\","
                + "\"message\":\"gone\"}", encode(new Event.RunFailed(ErrorCode.UNAVAILABLE, "gone")));
    }

    @Test
    void anErrorCarriesItsCodeAndField() throws IOException {
        List<String> frames = new ArrayList<>();
        session.encodeError(GatewayError.field(ErrorCode.MISSING_FIELD, "text", "text is required"), writer(frames));
        JsonNode error = Json.MAPPER.readTree(frames.get(0));
        assertEquals("error", error.get("type").asText());
        assertEquals(ErrorCode.MISSING_FIELD.wireCode(), error.get("code").asText());
        assertEquals("text is required", error.get("message").asText());
    }

    @Test
    void theProviderServesThePathItsOptionNames() {
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

    private void assertFailure(String frame, ErrorCode code, String field) {
        Decoded.Failure failure = assertInstanceOf(Decoded.Failure.class, session.decode(frame), frame);
        assertEquals(code, failure.error().code(), frame);
        if (field != null) {
            assertEquals(field, failure.error().details().get("field"), frame);
        }
    }

    private String encode(Event event) throws IOException {
        List<String> frames = new ArrayList<>();
        session.encode(new Envelope("c1", "r1", 7, 0, event), writer(frames));
        assertEquals(1, frames.size());
        return frames.get(0);
    }

    /** A frame writer that keeps each frame's text. */
    private static FrameWriter writer(List<String> frames) {
        return new FrameWriter() {
            private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            private JsonGenerator generator;

            @Override
            public JsonGenerator begin() throws IOException {
                bytes.reset();
                generator = Json.FACTORY.createGenerator(bytes);
                return generator;
            }

            @Override
            public void end() throws IOException {
                generator.close();
                frames.add(bytes.toString(java.nio.charset.StandardCharsets.UTF_8));
            }
        };
    }
}
