package dev.switchboard.adapter.voiceassist;

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
import dev.switchboard.core.spi.JsonInput.Refused;

import java.util.List;
import java.util.Map;

import static dev.switchboard.core.spi.JsonInput.absent;
import static dev.switchboard.core.spi.JsonInput.missing;
import static dev.switchboard.core.spi.JsonInput.optionalText;
import static dev.switchboard.core.spi.JsonInput.parseObject;
import static dev.switchboard.core.spi.JsonInput.requiredText;
import static dev.switchboard.core.spi.JsonInput.textRule;
import static dev.switchboard.core.spi.JsonInput.unknownType;

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

    private static final String TYPES = MESSAGE + " or " + PING;

    private final int maxContentChars;
    /** The conversation the connection's URL names; null when it named none. */
    private final String urlConversationId;

    VoiceAssistDecoder(int maxContentChars, String urlConversationId) {
        this.maxContentChars = maxContentChars;
        this.urlConversationId = urlConversationId;
    }

    Decoded decode(String text) {
        try {
            JsonNode root = parseObject(text, "a VoiceAssist message is a JSON object");
            // The spec's server answers UNKNOWN_MESSAGE_TYPE for any type it does not handle, absent ones included.
            JsonNode type = root.get("type");
            if (absent(type) || !type.isTextual()) {
                return new Decoded.Failure(new GatewayError(ErrorCode.UNKNOWN_TYPE,
                        "type is required and must be a string: " + TYPES, Map.of("field", "type")));
            }
            return switch (type.textValue()) {
                case MESSAGE -> message(root);
                case PING -> Decoded.of(new Command.Ping());
                default -> unknownType(type, TYPES);
            };
        } catch (Refused r) {
            return r.failure();
        }
    }

    private Decoded message(JsonNode msg) throws Refused {
        String content = requiredText(msg, "content", "content", maxContentChars);
        String conversationId = optionalText(msg, "session_id", "session_id", MAX_ID_CHARS);
        if (conversationId == null) {
            conversationId = urlConversationId;
        }
        if (conversationId == null) {
            throw missing("session_id", textRule(MAX_ID_CHARS) + ", as the connection's URL names no conversationId");
        }
        String clinicalContextId = optionalText(msg, "clinical_context_id", "clinical_context_id", MAX_ID_CHARS);
        ObjectNode metadata = clinicalContextId == null ? null
                : Json.object().put("clinical_context_id", clinicalContextId);
        return Decoded.of(new Command.StartRun(conversationId, Ids.next("run"), null,
                List.of(InputMessage.text(Ids.next("msg"), Role.USER, content)), List.of(),
                null, null, null, metadata));
    }
}
