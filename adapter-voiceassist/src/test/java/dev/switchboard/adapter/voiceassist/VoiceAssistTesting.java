package dev.switchboard.adapter.voiceassist;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Event;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.testkit.EmbeddedSession;

import java.time.Instant;
import java.util.List;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A session under test of the spec's example conversation that keeps every frame it writes, each
 * checked to have a well-formed timestamp if it has one at all.
 */
final class VoiceAssistTesting extends EmbeddedSession<DialectSession> {
    /** The spec's example client id and conversation id. */
    static final String CLIENT_ID = "c550e8400-e29b-41d4-a716-446655440000";
    static final String CONVERSATION = "550e8400-e29b-41d4-a716-446655440000";
    /** The time of every spec example, read by sessions under test and stamped on every envelope. */
    static final long NOW = Instant.parse("2025-11-22T12:34:56.789Z").toEpochMilli();
    static final Pattern TIMESTAMP = Pattern.compile("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z$");

    VoiceAssistTesting() {
        this(AdapterContext.defaults(), CONVERSATION);
    }

    VoiceAssistTesting(AdapterContext context, String urlConversationId) {
        super(new VoiceAssistSession(CLIENT_ID, urlConversationId, context.maxContentChars(), () -> NOW), NOW, 0);
    }

    /** Encodes these events of one run of the URL's conversation, stamped {@link #NOW}. */
    List<JsonNode> encode(String runId, Event... events) {
        return encode(CONVERSATION, runId, events);
    }

    /** Encodes one event stamped with this time. */
    List<JsonNode> encodeAt(long timestamp, String runId, Event event) {
        return encodeAt(timestamp, CONVERSATION, runId, event);
    }

    @Override
    protected void checkFrame(JsonNode frame) {
        assertTimestampWellFormed(frame);
    }

    static void assertTimestampWellFormed(JsonNode frame) {
        if (frame.has("timestamp")) {
            assertThat(frame.get("timestamp").textValue()).as("timestamp of %s", frame).matches(TIMESTAMP);
        }
    }
}
