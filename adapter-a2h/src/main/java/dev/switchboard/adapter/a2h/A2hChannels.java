package dev.switchboard.adapter.a2h;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Json;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The contact channels a call or a human may name ({@code {"<type>": {fields}}}): which ones
 * exist, their fields, and which the gateway delivers itself.
 *
 * <p>{@code session} names a conversation: the call is shown to every connection of it that can
 * answer approvals, now or when one joins. {@code human} names an enrolled human, reached through
 * the first session among their prioritized channels. Slack, email, SMS and WhatsApp are accepted
 * and stored but not delivered from here: such a call waits for an answer through
 * {@code respond}.
 */
final class A2hChannels {
    static final String SESSION = "session";
    static final String HUMAN = "human";

    /** One field of a channel type: JSON type and meaning, as {@code GET /channels} lists it. */
    private record Field(String type, String description) {
    }

    /** A channel type: whether the gateway delivers it, and its fields. */
    private record Type(boolean deliverable, Map<String, Field> fields) {
    }

    private static final Map<String, Type> TYPES = new LinkedHashMap<>();

    static {
        TYPES.put(SESSION, new Type(true, fields(
                "session_id", new Field("string", "The conversation (HAI session_id, AG-UI threadId, VoiceAssist "
                        + "conversationId, AgentScope session_id) whose connected people are asked"))));
        TYPES.put(HUMAN, new Type(true, fields(
                "human_id", new Field("string", "An enrolled human (GET /humans), reached through the first "
                        + "session channel among their prioritized contact channels"))));
        TYPES.put("slack", new Type(false, fields(
                "channel_or_user_id", new Field("string", "The Slack channel or user ID to send messages to"),
                "context_about_channel_or_user", new Field("string", "Additional context about the Slack channel or user"),
                "allowed_responder_ids", new Field("string[]", "Slack user IDs allowed to respond"),
                "thread_ts", new Field("string", "Thread timestamp for threaded messages"))));
        TYPES.put("email", new Type(false, fields(
                "address", new Field("string", "Email address to send messages to"),
                "context_about_user", new Field("string", "Additional context about the email recipient"),
                "in_reply_to_message_id", new Field("string", "The message ID of the email to reply to"),
                "references_message_id", new Field("string", "The message ID of the email to reference"))));
        TYPES.put("sms", new Type(false, fields(
                "phone_number", new Field("string", "The phone number to contact"),
                "context_about_user", new Field("string", "Additional context about the user"))));
        TYPES.put("whatsapp", new Type(false, fields(
                "phone_number", new Field("string", "The phone number to contact"),
                "context_about_user", new Field("string", "Additional context about the user"))));
    }

    private A2hChannels() {
    }

    private static Map<String, Field> fields(Object... nameAndField) {
        Map<String, Field> out = new LinkedHashMap<>();
        for (int i = 0; i < nameAndField.length; i += 2) {
            out.put((String) nameAndField[i], (Field) nameAndField[i + 1]);
        }
        return out;
    }

    /**
     * The body of {@code GET /channels}: each type's fields in the draft's form, and beside them
     * which types this gateway delivers itself.
     */
    static ObjectNode describe() {
        ObjectNode body = Json.object();
        ObjectNode channels = body.putObject("channels");
        ObjectNode deliverable = body.putObject("deliverable");
        TYPES.forEach((name, type) -> {
            ObjectNode fields = channels.putObject(name);
            type.fields().forEach((f, info) -> fields.putObject(f).put("type", info.type())
                    .put("description", info.description()));
            deliverable.put(name, type.deliverable());
        });
        return body;
    }

    /**
     * Checks a channel: an object of one or more known types, each an object; a session names its
     * conversation, a human their id ({@code humanAllowed} false inside a human's own channels).
     */
    static void check(JsonNode channel, String at, boolean humanAllowed, A2hInput in) {
        if (!channel.isObject() || channel.isEmpty()) {
            in.invalid(at, "an object naming a channel type: one of " + String.join(", ", types(humanAllowed)));
            return;
        }
        for (Map.Entry<String, JsonNode> e : channel.properties()) {
            if (in.failed()) {
                return;
            }
            String type = e.getKey();
            String where = at + "." + type;
            if (!TYPES.containsKey(type) || type.equals(HUMAN) && !humanAllowed) {
                in.invalid(at, "an object naming a channel type: one of " + String.join(", ", types(humanAllowed))
                        + " (not " + type + ")");
            } else if (!e.getValue().isObject()) {
                in.invalid(where, "an object");
            } else if (type.equals(SESSION)) {
                in.id(e.getValue(), e.getValue().has("sessionId") ? "sessionId" : "session_id", where + ".session_id");
            } else if (type.equals(HUMAN)) {
                in.id(e.getValue(), "human_id", where + ".human_id");
            }
        }
    }

    /** The conversation a checked channel names directly, if it has a session. */
    static Optional<String> session(JsonNode channel) {
        JsonNode s = channel == null ? null : channel.get(SESSION);
        if (s == null || !s.isObject()) {
            return Optional.empty();
        }
        JsonNode id = s.has("sessionId") ? s.get("sessionId") : s.get("session_id");
        return Optional.of(id.textValue());
    }

    /** The human a checked channel names, if it has no session of its own. */
    static Optional<String> human(JsonNode channel) {
        if (channel == null || session(channel).isPresent() || !channel.path(HUMAN).isObject()) {
            return Optional.empty();
        }
        return Optional.of(channel.get(HUMAN).get("human_id").textValue());
    }

    private static Iterable<String> types(boolean humanAllowed) {
        return TYPES.keySet().stream().filter(t -> humanAllowed || !t.equals(HUMAN)).toList();
    }
}
