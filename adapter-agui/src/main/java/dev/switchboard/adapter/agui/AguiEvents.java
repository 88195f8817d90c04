package dev.switchboard.adapter.agui;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.FrameWriter;
import dev.switchboard.core.spi.JsonFrame;

import java.io.IOException;
import java.util.Collection;
import java.util.Map;

/**
 * Writes AG-UI events, one frame each, straight into a {@link FrameWriter}: camelCase keys, absent
 * optional fields left out rather than written as {@code null}, and an integer millisecond
 * {@code timestamp} on every event. Field names follow {@code @ag-ui/core} 1.0 ({@code EventSchema}).
 */
final class AguiEvents {
    private static final byte[] CONTENT_START = JsonFrame.fragment("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":");
    private static final byte[] CONTENT_DELTA = JsonFrame.fragment(",\"delta\":");
    private static final byte[] CONTENT_TIMESTAMP = JsonFrame.fragment(",\"timestamp\":");
    private static final byte[] CONTENT_END = JsonFrame.fragment("}");

    /* Not JsonGenerator.writeTree, which flushes the generator (the frame) after every tree. */
    private static final ObjectWriter TREE_WRITER =
            Json.MAPPER.writer().without(SerializationFeature.FLUSH_AFTER_WRITE_VALUE);

    static final String APPROVAL_REQUEST = "agora:tool_approval_request";
    static final String AGORA_ERROR = "agora:error";

    private AguiEvents() {
    }

    static void runStarted(FrameWriter out, long timestamp, String threadId, String runId, String parentRunId)
            throws IOException {
        JsonGenerator gen = begin(out, "RUN_STARTED");
        gen.writeStringField("threadId", threadId);
        gen.writeStringField("runId", runId);
        if (parentRunId != null) {
            gen.writeStringField("parentRunId", parentRunId);
        }
        end(gen, out, timestamp);
    }

    /** {@code RUN_FINISHED} without an outcome, as the AGORA profile sends it. */
    static void runFinished(FrameWriter out, long timestamp, String threadId, String runId,
                            Collection<Event.Usage> usage) throws IOException {
        JsonGenerator gen = begin(out, "RUN_FINISHED");
        gen.writeStringField("threadId", threadId);
        gen.writeStringField("runId", runId);
        usage(gen, usage);
        end(gen, out, timestamp);
    }

    /** {@code RUN_FINISHED} with the outcome {@code {"type":"success"}}. */
    static void runSucceeded(FrameWriter out, long timestamp, String threadId, String runId,
                             Collection<Event.Usage> usage) throws IOException {
        JsonGenerator gen = begin(out, "RUN_FINISHED");
        gen.writeStringField("threadId", threadId);
        gen.writeStringField("runId", runId);
        gen.writeObjectFieldStart("outcome");
        gen.writeStringField("type", "success");
        gen.writeEndObject();
        usage(gen, usage);
        end(gen, out, timestamp);
    }

    /**
     * {@code RUN_FINISHED} with an interrupt outcome asking for one tool approval. The interrupt's
     * id is the approval id, which the next run's {@code resume[].interruptId} answers; its
     * {@code responseSchema} tells a client what the answer's {@code payload} should hold.
     */
    static void runInterrupted(FrameWriter out, long timestamp, String threadId, String runId,
                               Event.ApprovalRequested approval, Collection<Event.Usage> usage) throws IOException {
        JsonGenerator gen = begin(out, "RUN_FINISHED");
        gen.writeStringField("threadId", threadId);
        gen.writeStringField("runId", runId);
        gen.writeObjectFieldStart("outcome");
        gen.writeStringField("type", "interrupt");
        gen.writeArrayFieldStart("interrupts");
        gen.writeStartObject();
        gen.writeStringField("id", approval.approvalId());
        gen.writeStringField("reason", "tool_call");
        if (!approval.description().isEmpty()) {
            gen.writeStringField("message", approval.description());
        }
        gen.writeStringField("toolCallId", approval.toolCallId());
        gen.writeObjectFieldStart("responseSchema");
        gen.writeStringField("type", "object");
        gen.writeObjectFieldStart("properties");
        gen.writeObjectFieldStart("approved");
        gen.writeStringField("type", "boolean");
        gen.writeEndObject();
        gen.writeObjectFieldStart("feedback");
        gen.writeStringField("type", "string");
        gen.writeEndObject();
        gen.writeEndObject();
        gen.writeArrayFieldStart("required");
        gen.writeString("approved");
        gen.writeEndArray();
        gen.writeEndObject();
        gen.writeObjectFieldStart("metadata");
        gen.writeStringField("toolName", approval.toolName());
        gen.writeFieldName("parameters");
        TREE_WRITER.writeValue(gen, approval.arguments());
        gen.writeStringField("reasoning", approval.reasoning());
        gen.writeStringField("riskLevel", approval.risk().wireName());
        gen.writeEndObject();
        gen.writeEndObject();
        gen.writeEndArray();
        gen.writeEndObject();
        usage(gen, usage);
        end(gen, out, timestamp);
    }

    static void runError(FrameWriter out, long timestamp, String message, String code, Collection<Event.Usage> usage)
            throws IOException {
        JsonGenerator gen = begin(out, "RUN_ERROR");
        gen.writeStringField("message", message);
        gen.writeStringField("code", code);
        usage(gen, usage);
        end(gen, out, timestamp);
    }

    /**
     * A terminal event's {@code usage}: one {@code TokenUsage} entry per model, left out when the
     * run reported none.
     */
    private static void usage(JsonGenerator gen, Collection<Event.Usage> usage) throws IOException {
        if (usage.isEmpty()) {
            return;
        }
        gen.writeArrayFieldStart("usage");
        for (Event.Usage u : usage) {
            gen.writeStartObject();
            gen.writeStringField("model", u.model());
            gen.writeNumberField("inputTokens", u.inputTokens());
            gen.writeNumberField("outputTokens", u.outputTokens());
            gen.writeNumberField("totalTokens", u.totalTokens());
            if (u.reasoningTokens() != null) {
                gen.writeNumberField("reasoningTokens", u.reasoningTokens());
            }
            if (u.cachedInputTokens() != null) {
                gen.writeNumberField("cachedInputTokens", u.cachedInputTokens());
            }
            gen.writeEndObject();
        }
        gen.writeEndArray();
    }

    static void stepStarted(FrameWriter out, long timestamp, String stepName) throws IOException {
        JsonGenerator gen = begin(out, "STEP_STARTED");
        gen.writeStringField("stepName", stepName);
        end(gen, out, timestamp);
    }

    static void stepFinished(FrameWriter out, long timestamp, String stepName) throws IOException {
        JsonGenerator gen = begin(out, "STEP_FINISHED");
        gen.writeStringField("stepName", stepName);
        end(gen, out, timestamp);
    }

    /** {@code role} is a text message role: developer, system, assistant or user. */
    static void textMessageStart(FrameWriter out, long timestamp, String messageId, String role) throws IOException {
        JsonGenerator gen = begin(out, "TEXT_MESSAGE_START");
        gen.writeStringField("messageId", messageId);
        gen.writeStringField("role", role);
        end(gen, out, timestamp);
    }

    /**
     * {@code TEXT_MESSAGE_CONTENT} of the message whose head (from {@link #textMessageContentHeads})
     * is {@code head}: the hot path, a delta's text escaped between bytes encoded before.
     */
    static void textMessageContent(FrameWriter out, long timestamp, byte[] head, String delta) throws IOException {
        JsonFrame.open()
                .raw(head).string(delta)
                .raw(CONTENT_TIMESTAMP).number(timestamp)
                .raw(CONTENT_END)
                .writeTo(out);
    }

    /** What {@code TEXT_MESSAGE_CONTENT}s write before their text, for a message's id (one per run). */
    static JsonFrame.RepeatedPart textMessageContentHeads() {
        return new JsonFrame.RepeatedPart(CONTENT_START, CONTENT_DELTA);
    }

    static void textMessageEnd(FrameWriter out, long timestamp, String messageId) throws IOException {
        JsonGenerator gen = begin(out, "TEXT_MESSAGE_END");
        gen.writeStringField("messageId", messageId);
        end(gen, out, timestamp);
    }

    /**
     * Opens a reasoning span and its one reasoning message under the same id: the core keeps one
     * message per span.
     */
    static void reasoningStart(FrameWriter out, long timestamp, String messageId) throws IOException {
        JsonGenerator gen = begin(out, "REASONING_START");
        gen.writeStringField("messageId", messageId);
        end(gen, out, timestamp);
        gen = begin(out, "REASONING_MESSAGE_START");
        gen.writeStringField("messageId", messageId);
        gen.writeStringField("role", "reasoning");
        end(gen, out, timestamp);
    }

    static void reasoningContent(FrameWriter out, long timestamp, String messageId, String delta) throws IOException {
        JsonGenerator gen = begin(out, "REASONING_MESSAGE_CONTENT");
        gen.writeStringField("messageId", messageId);
        gen.writeStringField("delta", delta);
        end(gen, out, timestamp);
    }

    /** Closes the reasoning message and its span. */
    static void reasoningEnd(FrameWriter out, long timestamp, String messageId) throws IOException {
        JsonGenerator gen = begin(out, "REASONING_MESSAGE_END");
        gen.writeStringField("messageId", messageId);
        end(gen, out, timestamp);
        gen = begin(out, "REASONING_END");
        gen.writeStringField("messageId", messageId);
        end(gen, out, timestamp);
    }

    static void toolCallStart(FrameWriter out, long timestamp, String toolCallId, String toolCallName,
                              String parentMessageId) throws IOException {
        JsonGenerator gen = begin(out, "TOOL_CALL_START");
        gen.writeStringField("toolCallId", toolCallId);
        gen.writeStringField("toolCallName", toolCallName);
        if (parentMessageId != null) {
            gen.writeStringField("parentMessageId", parentMessageId);
        }
        end(gen, out, timestamp);
    }

    static void toolCallArgs(FrameWriter out, long timestamp, String toolCallId, String delta) throws IOException {
        JsonGenerator gen = begin(out, "TOOL_CALL_ARGS");
        gen.writeStringField("toolCallId", toolCallId);
        gen.writeStringField("delta", delta);
        end(gen, out, timestamp);
    }

    static void toolCallEnd(FrameWriter out, long timestamp, String toolCallId) throws IOException {
        JsonGenerator gen = begin(out, "TOOL_CALL_END");
        gen.writeStringField("toolCallId", toolCallId);
        end(gen, out, timestamp);
    }

    static void toolCallResult(FrameWriter out, long timestamp, String messageId, String toolCallId, String content)
            throws IOException {
        JsonGenerator gen = begin(out, "TOOL_CALL_RESULT");
        gen.writeStringField("messageId", messageId);
        gen.writeStringField("toolCallId", toolCallId);
        gen.writeStringField("content", content);
        gen.writeStringField("role", "tool");
        end(gen, out, timestamp);
    }

    static void stateSnapshot(FrameWriter out, long timestamp, JsonNode snapshot) throws IOException {
        JsonGenerator gen = begin(out, "STATE_SNAPSHOT");
        gen.writeFieldName("snapshot");
        TREE_WRITER.writeValue(gen, snapshot);
        end(gen, out, timestamp);
    }

    /** The AGORA profile's run status snapshot: {@code {threadId, runId, status}}. */
    static void statusSnapshot(FrameWriter out, long timestamp, String threadId, String runId, String status)
            throws IOException {
        JsonGenerator gen = begin(out, "STATE_SNAPSHOT");
        gen.writeObjectFieldStart("snapshot");
        gen.writeStringField("threadId", threadId);
        gen.writeStringField("runId", runId);
        gen.writeStringField("status", status);
        gen.writeEndObject();
        end(gen, out, timestamp);
    }

    static void stateDelta(FrameWriter out, long timestamp, JsonNode patch) throws IOException {
        JsonGenerator gen = begin(out, "STATE_DELTA");
        gen.writeFieldName("delta");
        TREE_WRITER.writeValue(gen, patch);
        end(gen, out, timestamp);
    }

    /**
     * {@code CUSTOM}; its {@code value} is required by the 1.0 schema, so a core event without one
     * is sent with {@code "value":null}.
     */
    static void custom(FrameWriter out, long timestamp, String name, JsonNode value) throws IOException {
        JsonGenerator gen = begin(out, "CUSTOM");
        gen.writeStringField("name", name);
        gen.writeFieldName("value");
        TREE_WRITER.writeValue(gen, value);
        end(gen, out, timestamp);
    }

    /** The AGORA profile's {@code agora:tool_approval_request} custom event. */
    static void approvalRequest(FrameWriter out, long timestamp, Event.ApprovalRequested approval) throws IOException {
        JsonGenerator gen = begin(out, "CUSTOM");
        gen.writeStringField("name", APPROVAL_REQUEST);
        gen.writeObjectFieldStart("value");
        gen.writeStringField("toolName", approval.toolName());
        gen.writeStringField("toolDescription", approval.description());
        gen.writeFieldName("parameters");
        TREE_WRITER.writeValue(gen, approval.arguments());
        gen.writeStringField("reasoning", approval.reasoning());
        gen.writeStringField("riskLevel", approval.risk().wireName());
        gen.writeStringField("approvalId", approval.approvalId());
        gen.writeStringField("toolCallId", approval.toolCallId());
        gen.writeEndObject();
        end(gen, out, timestamp);
    }

    /** The AGORA profile's {@code agora:error} custom event for an error answered to one connection. */
    static void agoraError(FrameWriter out, long timestamp, GatewayError error) throws IOException {
        JsonGenerator gen = begin(out, "CUSTOM");
        gen.writeStringField("name", AGORA_ERROR);
        gen.writeObjectFieldStart("value");
        gen.writeStringField("errorCode", error.code().wireCode());
        gen.writeStringField("message", error.message());
        details(gen, error);
        gen.writeEndObject();
        end(gen, out, timestamp);
    }

    /** A whole HTTP error body, {@code {"error":{"code","message","details"?}}}; not an event. */
    static void errorBody(FrameWriter out, GatewayError error) throws IOException {
        JsonGenerator gen = out.begin();
        gen.writeStartObject();
        gen.writeObjectFieldStart("error");
        gen.writeStringField("code", error.code().wireCode());
        gen.writeStringField("message", error.message());
        details(gen, error);
        gen.writeEndObject();
        gen.writeEndObject();
        out.end();
    }

    private static void details(JsonGenerator gen, GatewayError error) throws IOException {
        if (error.details().isEmpty()) {
            return;
        }
        gen.writeObjectFieldStart("details");
        for (Map.Entry<String, String> detail : error.details().entrySet()) {
            gen.writeStringField(detail.getKey(), detail.getValue());
        }
        gen.writeEndObject();
    }

    private static JsonGenerator begin(FrameWriter out, String type) throws IOException {
        JsonGenerator gen = out.begin();
        gen.writeStartObject();
        gen.writeStringField("type", type);
        return gen;
    }

    private static void end(JsonGenerator gen, FrameWriter out, long timestamp) throws IOException {
        gen.writeNumberField("timestamp", timestamp);
        gen.writeEndObject();
        out.end();
    }
}
