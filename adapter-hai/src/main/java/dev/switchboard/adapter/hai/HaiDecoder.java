package dev.switchboard.adapter.hai;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
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
 * Turns client-to-server HAI messages (spec "Message Types" 1 and 6) into commands, refusing
 * bad input with a typed failure.
 *
 * <p>An optional field sent as JSON {@code null} counts as absent, and so does a required one
 * (which is then reported missing).
 */
final class HaiDecoder {
    static final String USER_MESSAGE = "user_message";
    static final String TOOL_APPROVAL_RESPONSE = "tool_approval_response";

    static final int MAX_SESSION_ID_CHARS = 128;
    private static final int MAX_ECHOED_TYPE_CHARS = 64;

    private static final String SESSION_ID_RULE =
            "a non-empty string of at most " + MAX_SESSION_ID_CHARS + " characters";

    private final int maxContentChars;
    private final String contentRule;
    private final String feedbackRule;

    HaiDecoder(int maxContentChars) {
        this.maxContentChars = maxContentChars;
        this.contentRule = "a string of 1 to " + maxContentChars + " characters, not only whitespace";
        this.feedbackRule = "a string of at most " + maxContentChars + " characters";
    }

    /** Parses one frame as a single JSON document; never null. */
    static JsonNode parse(String text) throws JsonProcessingException {
        return Json.parseStrict(text);
    }

    /** Whether a started run asked for one whole {@code assistant_message} instead of chunks. */
    static boolean nonStreaming(Command.StartRun run) {
        JsonNode stream = run.metadata() == null ? null : run.metadata().get("stream");
        return stream != null && stream.isBoolean() && !stream.booleanValue();
    }

    Decoded decode(String text) {
        JsonNode root;
        try {
            root = parse(text);
        } catch (JsonProcessingException e) {
            // also covers StreamConstraintsException: nesting, number or string length over the limits
            return Decoded.fail(ErrorCode.INVALID_JSON, "the message is not valid JSON: " + e.getOriginalMessage());
        }
        if (root.isMissingNode()) {
            return Decoded.fail(ErrorCode.INVALID_JSON, "the message is empty; a HAI message is a JSON object");
        }
        if (!root.isObject()) {
            return Decoded.fail(ErrorCode.INVALID_JSON, "a HAI message is a JSON object");
        }
        JsonNode type = root.get("type");
        if (absent(type)) {
            return Decoded.failField(ErrorCode.MISSING_FIELD, "type",
                    "type is required: " + USER_MESSAGE + " or " + TOOL_APPROVAL_RESPONSE);
        }
        if (!type.isTextual()) {
            return Decoded.failField(ErrorCode.INVALID_FIELD, "type",
                    "type must be a string: " + USER_MESSAGE + " or " + TOOL_APPROVAL_RESPONSE);
        }
        return switch (type.textValue()) {
            case USER_MESSAGE -> userMessage(root);
            case TOOL_APPROVAL_RESPONSE -> toolApprovalResponse(root);
            default -> new Decoded.Failure(new GatewayError(ErrorCode.UNKNOWN_TYPE,
                    "unknown message type \"" + truncate(type.textValue()) + "\"; a client sends "
                            + USER_MESSAGE + " or " + TOOL_APPROVAL_RESPONSE,
                    Map.of("type", truncate(type.textValue()))));
        };
    }

    private Decoded userMessage(JsonNode msg) {
        JsonNode content = msg.get("content");
        if (absent(content)) {
            return missing("content", contentRule);
        }
        if (!content.isTextual()) {
            return invalid("content", contentRule);
        }
        String text = content.textValue();
        int length = text.codePointCount(0, text.length());
        if (length == 0 || length > maxContentChars || blank(text)) {
            return invalid("content", contentRule);
        }

        JsonNode sessionId = msg.get("session_id");
        if (absent(sessionId)) {
            return missing("session_id", SESSION_ID_RULE);
        }
        if (!sessionId.isTextual() || sessionId.textValue().isEmpty()
                || codePoints(sessionId.textValue()) > MAX_SESSION_ID_CHARS) {
            return invalid("session_id", SESSION_ID_RULE);
        }

        JsonNode metadata = msg.get("metadata");
        if (absent(metadata)) {
            metadata = null;
        } else if (!metadata.isObject()) {
            return invalid("metadata", "an object");
        } else {
            JsonNode stream = metadata.get("stream");
            if (!absent(stream) && !stream.isBoolean()) {
                return invalid("metadata.stream", "a boolean");
            }
        }

        return Decoded.of(new Command.StartRun(sessionId.textValue(), Ids.next("run"), null,
                List.of(InputMessage.text(Ids.next("msg"), Role.USER, text)), List.of(),
                null, null, null, metadata));
    }

    private Decoded toolApprovalResponse(JsonNode msg) {
        JsonNode approvalId = msg.get("approval_id");
        if (absent(approvalId)) {
            return missing("approval_id", "a non-empty string");
        }
        if (!approvalId.isTextual() || approvalId.textValue().isEmpty()) {
            return invalid("approval_id", "a non-empty string");
        }

        JsonNode approved = msg.get("approved");
        if (absent(approved)) {
            return missing("approved", "a boolean");
        }
        if (!approved.isBoolean()) {
            return invalid("approved", "a boolean");
        }

        JsonNode feedback = msg.get("feedback");
        String feedbackText = null;
        if (!absent(feedback)) {
            if (!feedback.isTextual() || codePoints(feedback.textValue()) > maxContentChars) {
                return invalid("feedback", feedbackRule);
            }
            feedbackText = feedback.textValue();
        }

        return Decoded.of(new Command.DecideApproval(approvalId.textValue(), approved.booleanValue(),
                feedbackText, null));
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

    private static int codePoints(String s) {
        return s.codePointCount(0, s.length());
    }

    /** True when every character is white space, including Unicode spaces such as U+00A0. */
    private static boolean blank(String s) {
        return s.codePoints().allMatch(cp -> Character.isWhitespace(cp) || Character.isSpaceChar(cp));
    }

    private static String truncate(String s) {
        if (codePoints(s) <= MAX_ECHOED_TYPE_CHARS) {
            return s;
        }
        return s.substring(0, s.offsetByCodePoints(0, MAX_ECHOED_TYPE_CHARS)) + "…";
    }
}
