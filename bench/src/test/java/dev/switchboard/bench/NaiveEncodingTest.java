package dev.switchboard.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Event;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.DialectSession;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class NaiveEncodingTest {

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void theBaselineWritesTheSameFrameAsTheDialectsEncoder(Dialect dialect) throws Exception {
        DialectSession session = dialect.newSession(dialect.adapter(), EventSamples.CONVERSATION);
        String encoded;
        long counter;
        try (BufferFrameWriter before = BufferFrameWriter.keeping(dialect);
             BufferFrameWriter out = BufferFrameWriter.keeping(dialect)) {
            long seq = EventSamples.prepare(session, dialect, Event.Kind.TEXT_DELTA, before);
            session.encode(EventSamples.envelope(EventSamples.sample(Event.Kind.TEXT_DELTA), seq), out);
            assertThat(out.kept()).hasSize(1);
            encoded = new String(out.kept().get(0), StandardCharsets.UTF_8);
            // VoiceAssist numbers a message's chunks from 0; AgentScope numbers every frame of the response.
            counter = dialect == Dialect.AGENTSCOPE_SSE ? before.frames() : 0;
        }
        String naive = new String(NaiveEncoding.textDelta(dialect, EventSamples.CONVERSATION, EventSamples.MESSAGE,
                EventSamples.DELTA, EventSamples.envelope(EventSamples.sample(Event.Kind.TEXT_DELTA), 3).timestamp(),
                counter), StandardCharsets.UTF_8);

        assertThat(framing(naive)).isEqualTo(framing(encoded));
        assertThat(json(naive)).isEqualTo(json(encoded));
    }

    private static String framing(String frame) {
        return frame.startsWith("data: ") ? "sse" : "ws";
    }

    private static JsonNode json(String frame) throws Exception {
        String body = frame.startsWith("data: ") ? frame.substring(6, frame.length() - 2) : frame;
        return Json.MAPPER.readTree(body);
    }
}
