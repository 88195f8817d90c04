package dev.switchboard.adapter.voiceassist;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.switchboard.core.Citation;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.spi.FrameWriter;
import dev.switchboard.core.spi.JsonFrame;

import java.io.IOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Writes server-to-client VoiceAssist messages (spec "Server → Client Messages"), keeping the
 * per-run state one connection needs: each open message's next {@code chunk_index} and the run's
 * last message, which a failed run's {@code error} names.
 */
final class VoiceAssistEncoder {
    private static final byte[] CHUNK_START = JsonFrame.fragment("{\"type\":\"message_chunk\",\"message_id\":");
    private static final byte[] CHUNK_CONTENT = JsonFrame.fragment(",\"content\":");
    private static final byte[] CHUNK_INDEX = JsonFrame.fragment(",\"chunk_index\":");
    private static final byte[] CHUNK_END = JsonFrame.fragment("}");

    /**
     * The message the last chunk was of, kept so that its next chunk looks nothing up: its run and
     * its chunk counter. Any other event may change {@link #runs}, so it forgets this
     * ({@link #chunkKnown}).
     */
    private boolean chunkKnown;
    private String chunkRunId;
    private String chunkMessageId;
    private int[] chunkNext;
    /** What a message's chunks write before their content (their type and its id), encoded once for all of them. */
    private final JsonFrame.RepeatedPart chunkHeads = new JsonFrame.RepeatedPart(CHUNK_START, CHUNK_CONTENT);

    static final String PROTOCOL_VERSION = "1.0";

    /*
     * The spec's timestamps always have milliseconds ("2025-11-22T12:34:56.789Z");
     * DateTimeFormatter.ISO_INSTANT leaves them out when they are zero.
     */
    private static final DateTimeFormatter TIMESTAMP =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT).withZone(ZoneOffset.UTC);

    private final Map<String, RunState> runs = new HashMap<>();

    /** What this connection knows of one run between its first event and its end. */
    private static final class RunState {
        /** The next chunk index of each message that has not completed, as a one-element counter. */
        final Map<String, int[]> nextChunk = new HashMap<>(4);
        String lastMessageId;
    }

    static String timestamp(long epochMillis) {
        return TIMESTAMP.format(Instant.ofEpochMilli(epochMillis));
    }

    void encode(Envelope envelope, FrameWriter out) throws IOException {
        Event event = envelope.event();
        if (event.kind() != Event.Kind.TEXT_DELTA) {
            chunkKnown = false;
        }
        switch (event.kind()) {
            case MESSAGE_STARTED -> {
                String messageId = ((Event.MessageStarted) event).messageId();
                RunState run = run(envelope.runId());
                run.nextChunk.put(messageId, new int[1]);
                run.lastMessageId = messageId;
                JsonGenerator gen = start(out, "message_start");
                gen.writeStringField("message_id", messageId);
                gen.writeStringField("timestamp", timestamp(envelope.timestamp()));
                end(gen, out);
            }
            case TEXT_DELTA -> {
                Event.TextDelta delta = (Event.TextDelta) event;
                if (!chunkKnown || !Objects.equals(envelope.runId(), chunkRunId)
                        || !delta.messageId().equals(chunkMessageId)) {
                    chunkOf(envelope.runId(), delta.messageId());
                }
                JsonFrame.open()
                        .raw(chunkHeads.of(delta.messageId())).string(delta.delta())
                        .raw(CHUNK_INDEX).number(chunkNext[0]++)
                        .raw(CHUNK_END)
                        .writeTo(out);
            }
            case MESSAGE_COMPLETED -> {
                Event.MessageCompleted done = (Event.MessageCompleted) event;
                RunState run = run(envelope.runId());
                run.nextChunk.remove(done.messageId());
                run.lastMessageId = done.messageId();
                JsonGenerator gen = start(out, "message_complete");
                gen.writeStringField("message_id", done.messageId());
                gen.writeStringField("content", done.text());
                gen.writeArrayFieldStart("citations");
                for (Citation c : done.citations()) {
                    citation(c, gen);
                }
                gen.writeEndArray();
                gen.writeStringField("timestamp", timestamp(envelope.timestamp()));
                end(gen, out);
            }
            case RUN_FAILED -> {
                RunState run = runs.remove(envelope.runId());
                Event.RunFailed failed = (Event.RunFailed) event;
                error(run == null ? null : run.lastMessageId, envelope.timestamp(),
                        VoiceAssistErrorCodes.of(failed.code()), failed.message(), out);
            }
            case RUN_FINISHED -> runs.remove(envelope.runId());
            // VoiceAssist has no message for these (design/mapping.md); approvals go to other connections.
            case RUN_STARTED, STEP_STARTED, STEP_FINISHED, TOOL_CALL_STARTED, TOOL_CALL_ARGS, TOOL_CALL_COMPLETED,
                    TOOL_RESULT, APPROVAL_REQUESTED, APPROVAL_RESOLVED, STATE_SNAPSHOT, STATE_DELTA, CUSTOM,
                    REASONING_STARTED, REASONING_DELTA, REASONING_COMPLETED, USAGE -> {
            }
        }
    }

    /** An error answered to this connection alone: it names no message, as no client message has an id. */
    void encodeError(GatewayError error, long now, FrameWriter out) throws IOException {
        error(null, now, VoiceAssistErrorCodes.of(error.code()), error.message(), out);
    }

    void connected(String clientId, long now, FrameWriter out) throws IOException {
        JsonGenerator gen = start(out, "connected");
        gen.writeStringField("client_id", clientId);
        gen.writeStringField("timestamp", timestamp(now));
        gen.writeStringField("protocol_version", PROTOCOL_VERSION);
        gen.writeArrayFieldStart("capabilities");
        gen.writeString("text_streaming");
        gen.writeEndArray();
        end(gen, out);
    }

    void pong(long now, FrameWriter out) throws IOException {
        JsonGenerator gen = start(out, "pong");
        gen.writeStringField("timestamp", timestamp(now));
        end(gen, out);
    }

    /** Makes the message of {@code messageId} in run {@code runId} the one {@link #chunkNext} and the rest are of. */
    private void chunkOf(String runId, String messageId) {
        RunState run = run(runId);
        // A connection that joined mid-message numbers the chunks it sees from 0.
        chunkNext = run.nextChunk.computeIfAbsent(messageId, id -> new int[1]);
        run.lastMessageId = messageId;
        chunkMessageId = messageId;
        chunkRunId = runId;
        chunkKnown = true;
    }

    private RunState run(String runId) {
        RunState run = runs.get(runId);
        if (run == null) {
            run = new RunState();
            runs.put(runId, run);
        }
        return run;
    }

    private static void error(String messageId, long timestamp, String code, String message, FrameWriter out)
            throws IOException {
        JsonGenerator gen = start(out, "error");
        if (messageId != null) {
            gen.writeStringField("message_id", messageId);
        }
        gen.writeStringField("timestamp", timestamp(timestamp));
        gen.writeObjectFieldStart("error");
        gen.writeStringField("code", code);
        gen.writeStringField("message", message);
        gen.writeEndObject();
        end(gen, out);
    }

    private static void citation(Citation c, JsonGenerator gen) throws IOException {
        gen.writeStartObject();
        gen.writeStringField("id", c.id());
        gen.writeStringField("source_type", c.sourceType());
        gen.writeStringField("title", c.title());
        gen.writeStringField("url", c.url());
        if (c.page() != null) {
            gen.writeNumberField("page", c.page());
        }
        gen.writeEndObject();
    }

    private static JsonGenerator start(FrameWriter out, String type) throws IOException {
        JsonGenerator gen = out.begin();
        gen.writeStartObject();
        gen.writeStringField("type", type);
        return gen;
    }

    private static void end(JsonGenerator gen, FrameWriter out) throws IOException {
        gen.writeEndObject();
        out.end();
    }
}
