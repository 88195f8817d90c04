package dev.switchboard.runtime.openai;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Json;
import dev.switchboard.core.Role;
import dev.switchboard.core.ToolCallRef;
import dev.switchboard.core.ToolSpec;

import java.io.UncheckedIOException;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Builds the body of a streamed Chat Completions request: the system prompt and the application's
 * context, the conversation as chat messages, and the tools the model may call.
 */
final class OpenAiMessages {
    /** What the model reads for a tool call that no tool message answered. */
    static final String UNANSWERED = "(no result: the call was not answered)";

    private OpenAiMessages() {
    }

    /** The request body for one turn. */
    static byte[] request(OpenAiConfig config, List<InputMessage> conversation, Collection<ToolSpec> frontendTools,
                          JsonNode context) {
        ObjectNode body = Json.object();
        body.put("model", config.model());
        ArrayNode messages = body.putArray("messages");
        if (!config.systemPrompt().isBlank()) {
            messages.add(Json.object().put("role", "system").put("content", config.systemPrompt()));
        }
        String contextText = contextText(context);
        if (!contextText.isEmpty()) {
            messages.add(Json.object().put("role", "system").put("content", contextText));
        }
        messages.addAll(chat(conversation));
        body.put("stream", true);
        body.putObject("stream_options").put("include_usage", true);
        ArrayNode tools = Json.MAPPER.createArrayNode();
        for (OpenAiTool t : config.tools().values()) {
            tools.add(function(t.name(), t.description(), t.parameters()));
        }
        for (ToolSpec t : frontendTools) {
            if (!config.tools().containsKey(t.name())) {
                tools.add(function(t.name(), t.description(), t.parameters()));
            }
        }
        if (!tools.isEmpty()) {
            body.set("tools", tools);
        }
        try {
            return Json.MAPPER.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static ObjectNode function(String name, String description, JsonNode parameters) {
        ObjectNode tool = Json.object().put("type", "function");
        ObjectNode fn = tool.putObject("function").put("name", name);
        if (!description.isEmpty()) {
            fn.put("description", description);
        }
        fn.set("parameters", parameters.isEmpty()
                ? Json.object().put("type", "object").set("properties", Json.object()) : parameters);
        return tool;
    }

    /**
     * The conversation as Chat Completions messages, made valid for servers that check the tool
     * protocol: consecutive assistant messages (an answer's text and each of its tool calls, kept
     * apart in the history) become one, every tool call is answered by a tool message right after
     * it (an unanswered one by {@link #UNANSWERED}), and a tool message that answers no open call
     * is left out. System and developer messages are both {@code system}, which every server knows.
     */
    static ArrayNode chat(List<InputMessage> conversation) {
        ArrayNode out = Json.MAPPER.createArrayNode();
        ObjectNode assistant = null;
        boolean answered = false;
        Map<String, Boolean> open = new LinkedHashMap<>();
        Set<String> seen = new HashSet<>();
        for (InputMessage m : conversation) {
            switch (m.role()) {
                case ASSISTANT -> {
                    if (assistant == null || answered) {
                        closeGroup(out, open);
                        assistant = Json.object().put("role", "assistant");
                        assistant.putNull("content");
                        out.add(assistant);
                        answered = false;
                    }
                    if (!m.content().isEmpty()) {
                        String before = assistant.path("content").asText("");
                        assistant.put("content", before + m.content());
                    }
                    for (ToolCallRef call : m.toolCalls()) {
                        if (seen.add(call.id())) {
                            ArrayNode calls = assistant.has("tool_calls")
                                    ? (ArrayNode) assistant.get("tool_calls") : assistant.putArray("tool_calls");
                            ObjectNode c = calls.addObject().put("id", call.id()).put("type", "function");
                            c.putObject("function").put("name", call.name()).put("arguments", call.arguments());
                            open.put(call.id(), false);
                        }
                    }
                }
                case TOOL -> {
                    if (m.toolCallId() != null && Boolean.FALSE.equals(open.get(m.toolCallId()))) {
                        open.put(m.toolCallId(), true);
                        out.add(toolMessage(m.toolCallId(), m.content()));
                        answered = true;
                    }
                }
                case USER, SYSTEM, DEVELOPER -> {
                    closeGroup(out, open);
                    assistant = null;
                    out.add(Json.object().put("role", m.role() == Role.USER ? "user" : "system")
                            .put("content", m.content()));
                }
            }
        }
        closeGroup(out, open);
        for (Iterator<JsonNode> it = out.iterator(); it.hasNext(); ) {
            JsonNode m = it.next();
            if ("assistant".equals(m.path("role").asText()) && m.path("content").isNull() && !m.has("tool_calls")) {
                it.remove();
            }
        }
        return out;
    }

    private static void closeGroup(ArrayNode out, Map<String, Boolean> open) {
        open.forEach((id, done) -> {
            if (!done) {
                out.add(toolMessage(id, UNANSWERED));
            }
        });
        open.clear();
    }

    private static ObjectNode toolMessage(String toolCallId, String content) {
        return Json.object().put("role", "tool").put("tool_call_id", toolCallId).put("content", content);
    }

    /** AG-UI context ({@code [{description, value}]}, or an object) as lines for the model, or empty. */
    static String contextText(JsonNode context) {
        if (context == null || context.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder("Context from the application:");
        if (context.isArray()) {
            for (JsonNode item : context) {
                sb.append("\n- ").append(Json.text(item.get("description"))).append(": ")
                        .append(Json.text(item.get("value")));
            }
        } else if (context.isObject()) {
            context.properties().forEach(e -> sb.append("\n- ").append(e.getKey()).append(": ")
                    .append(Json.text(e.getValue())));
        } else {
            sb.append("\n").append(Json.text(context));
        }
        return sb.toString();
    }
}
