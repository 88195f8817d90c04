package dev.switchboard.runtime.agui;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Json;
import dev.switchboard.core.ToolCallRef;
import dev.switchboard.core.ToolSpec;
import dev.switchboard.core.spi.RunRequest;

import java.io.UncheckedIOException;
import java.util.List;

/**
 * Builds the {@code RunAgentInput} of one request upstream ({@code @ag-ui/core} 1.0
 * {@code RunAgentInputSchema}): the conversation's id as {@code threadId}, every message of the
 * conversation as AG-UI messages, and the client's tools, context, state and forwarded properties.
 * Absent optional fields are left out, never sent as {@code null}.
 */
final class AguiUpstreamInput {
    private AguiUpstreamInput() {
    }

    /** The body of a request; {@code resume} is null for a run that does not continue interrupts. */
    static byte[] build(RunRequest request, String runId, List<InputMessage> messages, ArrayNode resume) {
        ObjectNode input = Json.object();
        input.put("threadId", request.conversationId());
        input.put("runId", runId);
        if (request.state() != null && !request.state().isNull()) {
            input.set("state", request.state());
        }
        ArrayNode out = input.putArray("messages");
        for (InputMessage m : messages) {
            ObjectNode message = message(m);
            if (message != null) {
                out.add(message);
            }
        }
        ArrayNode tools = input.putArray("tools");
        for (ToolSpec t : request.tools()) {
            tools.addObject().put("name", t.name()).put("description", t.description()).set("parameters", t.parameters());
        }
        input.set("context", context(request.context()));
        if (request.forwardedProps() != null && !request.forwardedProps().isNull()) {
            input.set("forwardedProps", request.forwardedProps());
        }
        if (resume != null) {
            input.set("resume", resume);
        }
        try {
            return Json.MAPPER.writeValueAsBytes(input);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One message in AG-UI's shape, or null for a tool result that names no call. */
    static ObjectNode message(InputMessage m) {
        ObjectNode out = Json.object().put("id", m.id());
        switch (m.role()) {
            case ASSISTANT -> {
                out.put("role", "assistant");
                if (!m.content().isEmpty()) {
                    out.put("content", m.content());
                }
                if (!m.toolCalls().isEmpty()) {
                    ArrayNode calls = out.putArray("toolCalls");
                    for (ToolCallRef call : m.toolCalls()) {
                        ObjectNode c = calls.addObject().put("id", call.id()).put("type", "function");
                        c.putObject("function").put("name", call.name()).put("arguments", call.arguments());
                    }
                }
            }
            case TOOL -> {
                if (m.toolCallId() == null) {
                    return null;
                }
                out.put("role", "tool").put("content", m.content()).put("toolCallId", m.toolCallId());
            }
            default -> out.put("role", m.role().wireName()).put("content", m.content());
        }
        return out;
    }

    /**
     * The client's context as the 1.0 {@code Context[]}: an array is passed on; an object (as the AGORA
     * profile allows) becomes one entry per key.
     */
    static ArrayNode context(JsonNode context) {
        ArrayNode out = Json.MAPPER.createArrayNode();
        if (context == null || context.isNull()) {
            return out;
        }
        if (context.isArray()) {
            return (ArrayNode) context;
        }
        if (context.isObject()) {
            context.properties().forEach(e ->
                    out.addObject().put("description", e.getKey()).put("value", Json.text(e.getValue())));
        }
        return out;
    }
}
