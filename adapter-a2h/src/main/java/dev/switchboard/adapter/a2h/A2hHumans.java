package dev.switchboard.adapter.a2h;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Ids;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.RestResponse;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The humans agents may contact (the draft's extended protocol): enrolled on the admin side with
 * their prioritized contact channels, shown to agents by id, name and description only.
 */
final class A2hHumans {
    static final String COLLECTION = "a2h_humans";
    private static final int MAX_NAME_CHARS = 256;
    private static final String CHANNELS = "prioritizedContactChannels";

    private final ConversationStore store;

    A2hHumans(ConversationStore store) {
        this.store = store;
    }

    /** {@code POST /humans}: enrolls a human; answers the admin view, contact channels included. */
    RestResponse enroll(String text) {
        A2hInput in = new A2hInput();
        ObjectNode body = in.body(text);
        String name = in.text(body, "name", "name", MAX_NAME_CHARS);
        String description = in.optionalText(body, "description", "description", A2hInput.MAX_TEXT_CHARS);
        JsonNode channels = body == null || body.path(CHANNELS).isNull() ? null : body.get(CHANNELS);
        if (channels != null && !in.failed()) {
            if (!channels.isArray()) {
                in.invalid(CHANNELS, "an array of contact channels");
            } else {
                for (int i = 0; i < channels.size(); i++) {
                    A2hChannels.check(channels.get(i), CHANNELS + "[" + i + "]", false, in);
                }
            }
        }
        if (in.failed()) {
            return A2hService.error(in.error());
        }
        ObjectNode human = Json.object().put("id", Ids.next("human")).put("name", name)
                .put("description", description == null ? "" : description);
        human.set(CHANNELS, channels == null ? Json.MAPPER.createArrayNode() : channels);
        store.putDocument(COLLECTION, human.get("id").textValue(), human.toString(), false);
        return RestResponse.json(201, human);
    }

    /** {@code GET /humans}. */
    RestResponse list() {
        return RestResponse.json(200, page(all()));
    }

    /** {@code GET /humans/search?q=}: humans whose name or description holds every word of {@code q}. */
    RestResponse search(Optional<String> q) {
        if (q.isEmpty() || q.get().isBlank()) {
            return A2hService.error(GatewayError.field(ErrorCode.MISSING_FIELD, "q",
                    "the query parameter q is required: words to find in a human's name or description"));
        }
        String[] words = q.get().toLowerCase(Locale.ROOT).strip().split("\\s+");
        List<ObjectNode> found = all().stream().filter(h -> {
            String text = (h.path("name").asText() + " " + h.path("description").asText()).toLowerCase(Locale.ROOT);
            for (String w : words) {
                if (!text.contains(w)) {
                    return false;
                }
            }
            return true;
        }).toList();
        return RestResponse.json(200, page(found));
    }

    /** {@code GET /humans/{id}}: the agent's view. */
    RestResponse get(String id) {
        return find(id).<RestResponse>map(h -> RestResponse.json(200, agentView(h)))
                .orElseGet(() -> A2hService.error(GatewayError.of(ErrorCode.NOT_FOUND, "no human " + id)));
    }

    /** An enrolled human with contact channels. */
    Optional<ObjectNode> find(String id) {
        return store.document(COLLECTION, id).map(A2hInput::stored);
    }

    /** The conversation of a human's first session channel, if they have one. */
    static Optional<String> session(ObjectNode human) {
        for (JsonNode channel : human.path(CHANNELS)) {
            Optional<String> s = A2hChannels.session(channel);
            if (s.isPresent()) {
                return s;
            }
        }
        return Optional.empty();
    }

    private List<ObjectNode> all() {
        return store.documents(COLLECTION).stream().map(A2hInput::stored).toList();
    }

    private static ObjectNode page(List<ObjectNode> humans) {
        ObjectNode body = Json.object();
        ArrayNode out = body.putArray("humans");
        humans.forEach(h -> out.add(agentView(h)));
        return body;
    }

    /** What an agent may see of a human: never how to reach them. */
    private static ObjectNode agentView(ObjectNode human) {
        return Json.object().put("id", human.path("id").asText()).put("name", human.path("name").asText())
                .put("description", human.path("description").asText());
    }
}
