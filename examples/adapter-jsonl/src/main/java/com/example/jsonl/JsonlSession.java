package com.example.jsonl;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Command;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Ids;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.FrameWriter;
import dev.switchboard.core.spi.JsonInput;

import java.io.IOException;
import java.util.Locale;
import java.util.Map;

/**
 * One connection of the JSON Lines dialect. The client sends objects with a {@code type}:
 * <pre>
 * {"type":"message","conversation":"c1","text":"hello"}      starts a run
 * {"type":"join","conversation":"c1","after":12}             follows a conversation (after: a cursor)
 * {"type":"decide","approval":"ap_1","approved":true,"feedback":"ok"}
 * {"type":"cancel","conversation":"c1"}
 * {"type":"ping"}
 * </pre>
 * and receives one object per event, {@code {"type":"text_delta","conversation":"c1","run":"r1",
 * "message":"m1","delta":"Hel","seq":7}}, its type the core event's kind in lower case; errors are {@code {"type":"error",
 * "code":"invalid_field","message":"…"}}.
 */
final class JsonlSession implements DialectSession {
    private final int maxContentChars;

    JsonlSession(int maxContentChars) {
        this.maxContentChars = maxContentChars;
    }

    @Override
    public Decoded decode(String text) {
        try {
            JsonNode frame = JsonInput.parseObject(text, "a message must be one JSON object");
            String type = JsonInput.requiredString(frame, "type", "type");
            return switch (type) {
                case "message" -> Decoded.of(Command.StartRun.of(
                        JsonInput.requiredId(frame, "conversation", "conversation"),
                        InputMessage.text(Ids.next("msg"), Role.USER,
                                JsonInput.requiredText(frame, "text", "text", maxContentChars))));
                case "join" -> Decoded.of(new Command.Subscribe(
                        JsonInput.requiredId(frame, "conversation", "conversation"), cursor(frame), true));
                case "decide" -> Decoded.of(new Command.DecideApproval(
                        JsonInput.requiredId(frame, "approval", "approval"),
                        JsonInput.requiredBoolean(frame, "approved", "approved"),
                        JsonInput.optionalString(frame, "feedback", "feedback"), null));
                case "cancel" -> Decoded.of(new Command.CancelRun(
                        JsonInput.requiredId(frame, "conversation", "conversation"), null));
                case "ping" -> Decoded.of(new Command.Ping());
                default -> JsonInput.unknownType(frame.get("type"), "message, join, decide, cancel or ping");
            };
        } catch (JsonInput.Refused refused) {
            return refused.failure();
        }
    }

    /** The {@code after} cursor: absent for live events and the active run so far. */
    private static long cursor(JsonNode frame) throws JsonInput.Refused {
        JsonNode after = frame.get("after");
        if (JsonInput.absent(after)) {
            return -1;
        }
        if (!after.canConvertToLong() || !after.isIntegralNumber() || after.longValue() < 0) {
            throw JsonInput.invalid("after", "a whole number of 0 or more");
        }
        return after.longValue();
    }

    @Override
    public void encode(Envelope envelope, FrameWriter out) throws IOException {
        Event event = envelope.event();
        JsonGenerator g = out.begin();
        g.writeStartObject();
        g.writeStringField("type", event.kind().name().toLowerCase(Locale.ROOT));
        g.writeStringField("conversation", envelope.conversationId());
        if (envelope.runId() != null) {
            g.writeStringField("run", envelope.runId());
        }
        if (event instanceof Event.MessageStarted e) {
            g.writeStringField("message", e.messageId());
            g.writeStringField("role", e.role().name().toLowerCase(Locale.ROOT));
        } else if (event instanceof Event.TextDelta e) {
            g.writeStringField("message", e.messageId());
            g.writeStringField("delta", e.delta());
        } else if (event instanceof Event.MessageCompleted e) {
            g.writeStringField("message", e.messageId());
            g.writeStringField("text", e.text());
        } else if (event instanceof Event.ToolCallStarted e) {
            g.writeStringField("toolCall", e.toolCallId());
            g.writeStringField("tool", e.toolName());
        } else if (event instanceof Event.ToolResult e) {
            g.writeStringField("toolCall", e.toolCallId());
            g.writeBooleanField("ok", e.ok());
            g.writeStringField("content", e.content());
        } else if (event instanceof Event.ApprovalRequested e) {
            g.writeStringField("approval", e.approvalId());
            g.writeStringField("tool", e.toolName());
            g.writeStringField("description", e.description());
        } else if (event instanceof Event.ApprovalResolved e) {
            g.writeStringField("approval", e.approvalId());
            g.writeBooleanField("approved", e.approved());
        } else if (event instanceof Event.RunFailed e) {
            g.writeStringField("code", e.code().wireCode());
            g.writeStringField("message", e.message());
        }
        // The type says what happened; the other kinds carry nothing more that this dialect shows.
        g.writeEndObject();
        out.end();
    }

    @Override
    public void encodeError(GatewayError error, FrameWriter out) throws IOException {
        JsonGenerator g = out.begin();
        g.writeStartObject();
        g.writeStringField("type", "error");
        g.writeStringField("code", error.code().wireCode());
        g.writeStringField("message", error.message());
        for (Map.Entry<String, String> d : error.details().entrySet()) {
            g.writeStringField(d.getKey(), d.getValue());
        }
        g.writeEndObject();
        out.end();
    }

    @Override
    public void pong(FrameWriter out) throws IOException {
        JsonGenerator g = out.begin();
        g.writeStartObject();
        g.writeStringField("type", "pong");
        g.writeEndObject();
        out.end();
    }
}
