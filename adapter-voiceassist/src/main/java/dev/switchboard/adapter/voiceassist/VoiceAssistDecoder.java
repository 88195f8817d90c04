package dev.switchboard.adapter.voiceassist;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Ids;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Json;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.Decoded;

import java.util.List;
import java.util.Map;

/**
 * Turns client-to-server VoiceAssist messages (spec "Client → Server Messages": {@code message}
 * and {@code ping}) into commands, refusing bad input with a typed failure.
 *
 * <p>An optional field sent as JSON {@code null} counts as absent, and so does a required one
 * (which is then reported missing). Fields the spec allows but the gateway has no use for, such
 * as a client {@code timestamp}, are ignored.
 */
final class VoiceAssistDecoder {
    static final String MESSAGE = "message";
    static final String PING = "ping";

    /** The longest conversation id or clinical context id accepted. */
    static final int MAX_ID_CHARS = 128;
    private static final int MAX_ECHOED_TYPE_CHARS = 64;

    private static final String ID_RULE = "a string of 1 to " + MAX_ID_CHARS + " characters, not only whitespace";
    private static final String TYPES = MESSAGE + " or " + PING;

    private final int maxContentChars;
    private final String contentRule;
    /** The conversation the connection's URL names; null when it named none. */
    private final String urlConversationId;

    VoiceAssistDecoder(int maxContentChars, String urlConversationId) {
        this.maxContentChars = maxContentChars;
        this.contentRule = "a string of 1 to " + maxContentChars + " characters, not only whitespace";
        this.urlConversationId = urlConversationId;
    }

    Decoded decode(String text) {
        JsonNode root;
        try {
            root = Json.parseStrict(text);
        } catch (JsonProcessingException e) {
            // also covers StreamConstraintsException: nesting, number or string length over the limits
            return Decoded.fail(ErrorCode.INVALID_JSON, "the message is not valid JSON: " + e.getOriginalMessage());
        }
        if (root.isMissingNode()) {
            return Decoded.fail(ErrorCode.INVALID_JSON, "the message is empty; a VoiceAssist message is a JSON object");
        }
        if (!root.isObject()) {
            return Decoded.fail(ErrorCode.INVALID_JSON, "a VoiceAssist message is a JSON object");
        }
        // The spec's server answers UNKNOWN_MESSAGE_TYPE for any type it does not handle, absent ones included.
        JsonNode type = root.get("type");
        if (absent(type) || !type.isTextual()) {
            return new Decoded.Failure(new GatewayError(ErrorCode.UNKNOWN_TYPE,
                    "type is required and must be a string: " + TYPES, Map.of("field", "type")));
        }
        return switch (type.textValue()) {
            case MESSAGE -> message(root);
            case PING -> Decoded.of(new Command.Ping());
            default -> new Decoded.Failure(new GatewayError(ErrorCode.UNKNOWN_TYPE,
                    "unknown message type \"" + truncate(type.textValue()) + "\"; a client sends " + TYPES,
                    Map.of("type", truncate(type.textValue()))));
        };
    }

    private Decoded message(JsonNode msg) {
        JsonNode content = msg.get("content");
        if (absent(content)) {
            return missing("content", contentRule);
        }
        if (!content.isTextual()) {
            return invalid("content", contentRule);
        }
        String text = content.textValue();
        if (blank(text) || codePoints(text) > maxContentChars) {
            return invalid("content", contentRule);
        }

        String conversationId = urlConversationId;
        JsonNode sessionId = msg.get("session_id");
        if (!absent(sessionId)) {
            if (!validId(sessionId)) {
                return invalid("session_id", ID_RULE);
            }
            conversationId = sessionId.textValue();
        } else if (conversationId == null) {
            return missing("session_id", ID_RULE + ", as the connection's URL names no conversationId");
        }

        ObjectNode metadata = null;
        JsonNode clinicalContextId = msg.get("clinical_context_id");
        if (!absent(clinicalContextId)) {
            if (!validId(clinicalContextId)) {
                return invalid("clinical_context_id", ID_RULE);
            }
            metadata = Json.object().put("clinical_context_id", clinicalContextId.textValue());
        }

        return Decoded.of(new Command.StartRun(conversationId, Ids.next("run"), null,
                List.of(InputMessage.text(Ids.next("msg"), Role.USER, text)), List.of(),
                null, null, null, metadata));
    }

    private static boolean validId(JsonNode id) {
        return id.isTextual() && !blank(id.textValue()) && codePoints(id.textValue()) <= MAX_ID_CHARS;
    }

    private static boolean absent(JsonNode node) {
        return node == null || node.isNull();
    }

    private static Decoded missing(String field, String accepts) {
        return Decoded.failField(ErrorCode.MISSING_FIELD, field, field + " is required: " + accepts);
    }

    private static Decoded invalid(String field, String accepts) {
        return Decoded.failField(ErrorCode.INVALID_FIELD, field, field + " must be " + accepts);
    }

    static int codePoints(String s) {
        return s.codePointCount(0, s.length());
    }

    /** True when every character is white space, including Unicode spaces such as U+00A0; true for "". */
    static boolean blank(String s) {
        return s.codePoints().allMatch(cp -> Character.isWhitespace(cp) || Character.isSpaceChar(cp));
    }

    private static String truncate(String s) {
        if (codePoints(s) <= MAX_ECHOED_TYPE_CHARS) {
            return s;
        }
        return s.substring(0, s.offsetByCodePoints(0, MAX_ECHOED_TYPE_CHARS)) + "…";
    }
}
