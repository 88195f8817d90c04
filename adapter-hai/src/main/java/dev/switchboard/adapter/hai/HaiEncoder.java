package dev.switchboard.adapter.hai;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.switchboard.core.Citation;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.FrameWriter;
import dev.switchboard.core.spi.JsonFrame;
import dev.switchboard.core.spi.JsonText;

import java.io.IOException;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Writes core events as server-to-client HAI messages (spec "Message Types" 2–5, 7 and 8),
 * keeping the per-run state one connection needs: the last status sent and whether the run
 * streams.
 */
final class HaiEncoder {
    /*
     * Runs this connection asked to be non-streaming but has not yet seen start. A refused
     * user_message (a run already active, say) never starts, so this is bounded rather than
     * cleared on run end.
     */
    private static final int MAX_PENDING_NON_STREAMING = 16;

    /* Not JsonGenerator.writeTree, which flushes the generator (the frame) after every tree. */
    private static final ObjectWriter TREE_WRITER =
            Json.MAPPER.writer().without(SerializationFeature.FLUSH_AFTER_WRITE_VALUE);

    private static final Set<String> STEP_STATUSES = Set.of("thinking", "routing", "executing_tools");

    private final Set<String> pendingNonStreaming = Collections.newSetFromMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > MAX_PENDING_NON_STREAMING;
        }
    });
    private final Map<String, RunState> runs = new HashMap<>();
    /** The session and the streaming message's ids, encoded once for all the message's chunks. */
    private final JsonText.Repeated chunkSessionId = new JsonText.Repeated();
    private final JsonText.Repeated chunkMessageId = new JsonText.Repeated();
    /**
     * What a streamed chunk writes after its content (the session's and the message's ids and
     * {@code "is_final":false}), encoded once for the session and message it was encoded for: every
     * delta of a message repeats it.
     */
    private byte[] chunkTail;
    private String chunkTailSessionId;
    private String chunkTailMessageId;
    /**
     * Whether the run of {@link #deltaRunId} streams, as {@link #streaming} found for the last delta:
     * a message's deltas do not each look their run up. Any other event may change {@link #runs}, so
     * it forgets this ({@link #deltaRunKnown}).
     */
    private boolean deltaRunKnown;
    private String deltaRunId;
    private boolean deltaRunStreams;

    private static final SerializableString TYPE = JsonText.of("type");
    private static final SerializableString ASSISTANT_MESSAGE_CHUNK = JsonText.of("assistant_message_chunk");
    private static final SerializableString CONTENT = JsonText.of("content");
    private static final SerializableString SESSION_ID = JsonText.of("session_id");
    private static final SerializableString MESSAGE_ID = JsonText.of("message_id");
    private static final SerializableString IS_FINAL = JsonText.of("is_final");
    private static final byte[] CHUNK_START = JsonFrame.fragment("{\"type\":\"assistant_message_chunk\",\"content\":");
    private static final byte[] CHUNK_SESSION_ID = JsonFrame.fragment(",\"session_id\":");
    private static final byte[] CHUNK_MESSAGE_ID = JsonFrame.fragment(",\"message_id\":");
    private static final byte[] CHUNK_FINAL_END = JsonFrame.fragment(",\"is_final\":true}");
    private static final byte[] CHUNK_NOT_FINAL_END = JsonFrame.fragment(",\"is_final\":false}");

    /** What this connection knows of one run between its start and its end. */
    private static final class RunState {
        final boolean streaming;
        String lastStatus;

        RunState(boolean streaming) {
            this.streaming = streaming;
        }
    }

    /** Marks a run this connection is starting as one that wants whole messages. */
    void expectNonStreaming(String runId) {
        pendingNonStreaming.add(runId);
    }

    void encode(Envelope envelope, FrameWriter out) throws IOException {
        String sessionId = envelope.conversationId();
        String runId = envelope.runId();
        Event event = envelope.event();
        if (event.kind() != Event.Kind.TEXT_DELTA) {
            deltaRunKnown = false;
        }
        switch (event.kind()) {
            case RUN_STARTED -> {
                RunState run = new RunState(!pendingNonStreaming.remove(runId));
                runs.put(runId, run);
                status(run, "thinking", sessionId, out);
            }
            case STEP_STARTED -> {
                String name = ((Event.StepStarted) event).stepName();
                if (STEP_STATUSES.contains(name)) {
                    RunState run = runs.computeIfAbsent(runId, id -> new RunState(true));
                    if (!name.equals(run.lastStatus)) {
                        status(run, name, sessionId, out);
                    }
                }
            }
            case REASONING_STARTED -> {
                // HAI has no reasoning text; its thinking status is the place for "reasoning now".
                RunState run = runs.computeIfAbsent(runId, id -> new RunState(true));
                if (!"thinking".equals(run.lastStatus)) {
                    status(run, "thinking", sessionId, out);
                }
            }
            case TEXT_DELTA -> {
                if (!deltaRunKnown || !Objects.equals(runId, deltaRunId)) {
                    deltaRunStreams = streaming(runId);
                    deltaRunId = runId;
                    deltaRunKnown = true;
                }
                if (deltaRunStreams) {
                    Event.TextDelta delta = (Event.TextDelta) event;
                    chunk(delta.messageId(), delta.delta(), false, List.of(), sessionId, out);
                }
            }
            case MESSAGE_COMPLETED -> {
                Event.MessageCompleted done = (Event.MessageCompleted) event;
                if (streaming(runId)) {
                    chunk(done.messageId(), "", true, done.citations(), sessionId, out);
                } else {
                    assistantMessage(done, sessionId, out);
                }
            }
            case TOOL_CALL_COMPLETED -> {
                Event.ToolCallCompleted call = (Event.ToolCallCompleted) event;
                toolCall(call.toolCallId(), call.toolName(), call.arguments(), "started", null, sessionId, out);
            }
            case TOOL_RESULT -> {
                Event.ToolResult result = (Event.ToolResult) event;
                toolCall(result.toolCallId(), result.toolName(), result.arguments(),
                        result.ok() ? "completed" : "failed", result.content(), sessionId, out);
            }
            case APPROVAL_REQUESTED -> approvalRequest((Event.ApprovalRequested) event, sessionId, out);
            case RUN_FINISHED -> {
                runs.remove(runId);
                status(null, "completed", sessionId, out);
            }
            case RUN_FAILED -> {
                runs.remove(runId);
                Event.RunFailed failed = (Event.RunFailed) event;
                JsonGenerator gen = out.begin();
                gen.writeStartObject();
                gen.writeStringField("type", "error");
                gen.writeStringField("error_code", HaiErrorCodes.of(failed.code()));
                gen.writeStringField("message", failed.message());
                gen.writeObjectFieldStart("details");
                gen.writeStringField("session_id", sessionId);
                if (runId != null) {
                    gen.writeStringField("run_id", runId);
                }
                gen.writeEndObject();
                gen.writeEndObject();
                out.end();
                status(null, "completed", sessionId, out);
            }
            // HAI has no message for these; tool calls are sent whole on TOOL_CALL_COMPLETED.
            case STEP_FINISHED, MESSAGE_STARTED, TOOL_CALL_STARTED, TOOL_CALL_ARGS, APPROVAL_RESOLVED,
                    STATE_SNAPSHOT, STATE_DELTA, CUSTOM, REASONING_DELTA, REASONING_COMPLETED, USAGE -> {
            }
        }
    }

    void encodeError(GatewayError error, FrameWriter out) throws IOException {
        JsonGenerator gen = out.begin();
        gen.writeStartObject();
        gen.writeStringField("type", "error");
        gen.writeStringField("error_code", HaiErrorCodes.of(error.code()));
        gen.writeStringField("message", error.message());
        if (!error.details().isEmpty()) {
            gen.writeObjectFieldStart("details");
            for (Map.Entry<String, String> detail : error.details().entrySet()) {
                gen.writeStringField(detail.getKey(), detail.getValue());
            }
            gen.writeEndObject();
        }
        gen.writeEndObject();
        out.end();
    }

    private byte[] chunkTail(String sessionId, String messageId) {
        if (!sessionId.equals(chunkTailSessionId) || !messageId.equals(chunkTailMessageId)) {
            chunkTail = JsonFrame.open()
                    .raw(CHUNK_SESSION_ID).string(chunkSessionId.of(sessionId))
                    .raw(CHUNK_MESSAGE_ID).string(chunkMessageId.of(messageId))
                    .raw(CHUNK_NOT_FINAL_END)
                    .toByteArray();
            chunkTailSessionId = sessionId;
            chunkTailMessageId = messageId;
        }
        return chunkTail;
    }

    private boolean streaming(String runId) {
        RunState run = runs.get(runId);
        return run == null || run.streaming;
    }

    private static void status(RunState run, String status, String sessionId, FrameWriter out) throws IOException {
        if (run != null) {
            run.lastStatus = status;
        }
        JsonGenerator gen = out.begin();
        gen.writeStartObject();
        gen.writeStringField("type", "status");
        gen.writeStringField("status", status);
        gen.writeStringField("session_id", sessionId);
        gen.writeEndObject();
        out.end();
    }

    /** A chunk of a streamed message: the hot path, with every repeated part encoded once. */
    private void chunk(String messageId, String content, boolean last, List<Citation> citations,
                       String sessionId, FrameWriter out) throws IOException {
        if (!last && citations.isEmpty()) {
            // Every delta's chunk: written as bytes, all but its content encoded once for the message.
            byte[] tail = chunkTail(sessionId, messageId);
            JsonFrame.open().raw(CHUNK_START).string(content).raw(tail).writeTo(out);
            return;
        }
        if (citations.isEmpty()) {
            JsonFrame.open()
                    .raw(CHUNK_START).string(content)
                    .raw(CHUNK_SESSION_ID).string(chunkSessionId.of(sessionId))
                    .raw(CHUNK_MESSAGE_ID).string(chunkMessageId.of(messageId))
                    .raw(CHUNK_FINAL_END)
                    .writeTo(out);
            return;
        }
        JsonGenerator gen = out.begin();
        gen.writeStartObject();
        gen.writeFieldName(TYPE);
        gen.writeString(ASSISTANT_MESSAGE_CHUNK);
        gen.writeFieldName(CONTENT);
        gen.writeString(content);
        gen.writeFieldName(SESSION_ID);
        gen.writeString(chunkSessionId.of(sessionId));
        gen.writeFieldName(MESSAGE_ID);
        gen.writeString(chunkMessageId.of(messageId));
        gen.writeFieldName(IS_FINAL);
        gen.writeBoolean(last);
        citations(citations, gen);
        gen.writeEndObject();
        out.end();
    }

    private static void assistantMessage(Event.MessageCompleted done, String sessionId, FrameWriter out)
            throws IOException {
        JsonGenerator gen = out.begin();
        gen.writeStartObject();
        gen.writeStringField("type", "assistant_message");
        gen.writeStringField("content", done.text());
        gen.writeStringField("session_id", sessionId);
        citations(done.citations(), gen);
        gen.writeEndObject();
        out.end();
    }

    /** Writes {@code "metadata":{"citations":[…]}}, or nothing when there are no citations. */
    private static void citations(List<Citation> citations, JsonGenerator gen) throws IOException {
        if (citations.isEmpty()) {
            return;
        }
        gen.writeObjectFieldStart("metadata");
        gen.writeArrayFieldStart("citations");
        for (Citation c : citations) {
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
        gen.writeEndArray();
        gen.writeEndObject();
    }

    private static void toolCall(String toolCallId, String toolName, JsonNode parameters, String status,
                                 String result, String sessionId, FrameWriter out) throws IOException {
        JsonGenerator gen = out.begin();
        gen.writeStartObject();
        gen.writeStringField("type", "tool_call");
        gen.writeStringField("tool_call_id", toolCallId);
        gen.writeStringField("tool_name", toolName);
        gen.writeFieldName("parameters");
        TREE_WRITER.writeValue(gen, parameters);
        gen.writeStringField("session_id", sessionId);
        gen.writeStringField("status", status);
        if (result != null) {
            gen.writeStringField("result", result);
        }
        gen.writeEndObject();
        out.end();
    }

    private static void approvalRequest(Event.ApprovalRequested request, String sessionId, FrameWriter out)
            throws IOException {
        JsonGenerator gen = out.begin();
        gen.writeStartObject();
        gen.writeStringField("type", "tool_approval_request");
        gen.writeStringField("tool_name", request.toolName());
        gen.writeStringField("tool_description", request.description());
        gen.writeFieldName("parameters");
        TREE_WRITER.writeValue(gen, request.arguments());
        gen.writeStringField("reasoning", request.reasoning());
        gen.writeStringField("risk_level", request.risk().wireName());
        gen.writeStringField("session_id", sessionId);
        gen.writeStringField("approval_id", request.approvalId());
        gen.writeEndObject();
        out.end();
    }
}
