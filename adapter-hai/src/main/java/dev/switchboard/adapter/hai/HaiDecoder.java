package dev.switchboard.adapter.hai;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Command;
import dev.switchboard.core.Ids;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Json;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.JsonInput.Refused;

import java.util.List;

import static dev.switchboard.core.spi.JsonInput.absent;
import static dev.switchboard.core.spi.JsonInput.invalid;
import static dev.switchboard.core.spi.JsonInput.missing;
import static dev.switchboard.core.spi.JsonInput.optionalBoolean;
import static dev.switchboard.core.spi.JsonInput.optionalObject;
import static dev.switchboard.core.spi.JsonInput.optionalString;
import static dev.switchboard.core.spi.JsonInput.parseObject;
import static dev.switchboard.core.spi.JsonInput.requiredBoolean;
import static dev.switchboard.core.spi.JsonInput.requiredId;
import static dev.switchboard.core.spi.JsonInput.requiredText;
import static dev.switchboard.core.spi.JsonInput.unknownType;

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

    private static final String TYPES = USER_MESSAGE + " or " + TOOL_APPROVAL_RESPONSE;

    private final int maxContentChars;

    HaiDecoder(int maxContentChars) {
        this.maxContentChars = maxContentChars;
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
        try {
            JsonNode root = parseObject(text, "a HAI message is a JSON object");
            JsonNode type = root.get("type");
            if (absent(type)) {
                throw missing("type", TYPES);
            }
            if (!type.isTextual()) {
                throw invalid("type", "a string: " + TYPES);
            }
            return switch (type.textValue()) {
                case USER_MESSAGE -> userMessage(root);
                case TOOL_APPROVAL_RESPONSE -> toolApprovalResponse(root);
                default -> unknownType(type, TYPES);
            };
        } catch (Refused r) {
            return r.failure();
        }
    }

    private Decoded userMessage(JsonNode msg) throws Refused {
        String content = requiredText(msg, "content", "content", maxContentChars);
        String sessionId = requiredId(msg, "session_id", "session_id", MAX_SESSION_ID_CHARS);
        JsonNode metadata = optionalObject(msg, "metadata", "metadata");
        if (metadata != null) {
            optionalBoolean(metadata, "stream", "metadata.stream", true);
        }
        return Decoded.of(new Command.StartRun(sessionId, Ids.next("run"), null,
                List.of(InputMessage.text(Ids.next("msg"), Role.USER, content)), List.of(),
                null, null, null, metadata));
    }

    private Decoded toolApprovalResponse(JsonNode msg) throws Refused {
        String approvalId = requiredId(msg, "approval_id", "approval_id");
        boolean approved = requiredBoolean(msg, "approved", "approved");
        String feedback = optionalString(msg, "feedback", "feedback", maxContentChars);
        return Decoded.of(new Command.DecideApproval(approvalId, approved, feedback, null));
    }
}
