package dev.switchboard.runtime.agui;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Event;
import dev.switchboard.core.Ids;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Json;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.Role;
import dev.switchboard.core.ToolCallRef;
import dev.switchboard.core.UpstreamHttp;
import dev.switchboard.core.spi.ApprovalRequest;
import dev.switchboard.core.spi.RunContext;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Translates the events of an AG-UI agent's streams ({@code @ag-ui/core} 1.0 {@code EventSchemas})
 * into core events of one run, across every request the run makes upstream.
 *
 * <p>Text, tool-call and reasoning events, the {@code *_CHUNK} shorthands among them, become their
 * core events; steps, state and {@code CUSTOM} events pass through. Activity, raw and subagent
 * events, which the core has no event for, pass as {@code Custom} events named
 * {@code ag-ui:<type in lower case>} holding the event. {@code MESSAGES_SNAPSHOT} and
 * {@code REASONING_ENCRYPTED_VALUE} are dropped: the conversation's messages are the gateway's own,
 * and an encrypted artefact is of use only to the agent that made it. A run's end is an
 * {@link Outcome} for the caller.
 */
final class AguiUpstreamEvents {
    /** Bad upstream input; its message says what was wrong, for the run's failure. */
    static final class Refused extends Exception {
        Refused(String message) {
            super(message, null, false, false);
        }
    }

    /** How an upstream run ended. */
    sealed interface Outcome {
        /** RUN_FINISHED with a success outcome (or none). */
        record Finished() implements Outcome {
        }

        /** RUN_FINISHED with an interrupt outcome: each interrupt, as sent. */
        record Interrupted(List<JsonNode> interrupts) implements Outcome {
        }

        /** RUN_FINISHED with a cancelled outcome. */
        record Cancelled() implements Outcome {
        }

        /** RUN_ERROR; {@code code} may be null. */
        record Failed(String message, String code) implements Outcome {
        }
    }

    /** A tool call seen in the run. */
    private static final class Call {
        final String name;
        final StringBuilder arguments = new StringBuilder();
        boolean open = true;

        Call(String name) {
            this.name = name;
        }

        JsonNode parsedArguments() {
            try {
                return Json.objectOrEmpty(Json.parseStrict(arguments.toString()));
            } catch (JsonProcessingException e) {
                return Json.object();
            }
        }
    }

    private final RunContext ctx;
    /** Open text and reasoning messages: their text so far, by message id. */
    private final Map<String, StringBuilder> texts = new LinkedHashMap<>();
    private final Map<String, StringBuilder> reasonings = new LinkedHashMap<>();
    private final Map<String, Call> calls = new LinkedHashMap<>();
    /** The message, tool call or reasoning message a {@code *_CHUNK} without an id continues. */
    private String textChunk;
    private String toolChunk;
    private String reasoningChunk;
    /** What the run added to the conversation, as the store keeps it. */
    private final List<InputMessage> added = new ArrayList<>();

    AguiUpstreamEvents(RunContext ctx) {
        this.ctx = ctx;
    }

    /** The messages the run has added so far. */
    List<InputMessage> messages() {
        return List.copyOf(added);
    }

    /** Takes one event; returns the run's outcome when the event ends the upstream run, else null. */
    Outcome onEvent(JsonNode e) throws Refused {
        if (!e.isObject()) {
            throw new Refused("the AG-UI agent sent an event that is not a JSON object: " + UpstreamHttp.shorten(e.toString()));
        }
        String type = required(e, "type", "an event");
        // A run of chunks ends at the first event of another type, as the official client reads them.
        if (textChunk != null && !type.equals("TEXT_MESSAGE_CHUNK")) {
            endText(textChunk);
        }
        if (toolChunk != null && !type.equals("TOOL_CALL_CHUNK")) {
            endCall(toolChunk);
        }
        if (reasoningChunk != null && !type.equals("REASONING_MESSAGE_CHUNK")) {
            endReasoning(reasoningChunk);
        }
        switch (type) {
            case "RUN_STARTED", "REASONING_START", "REASONING_END", "MESSAGES_SNAPSHOT", "REASONING_ENCRYPTED_VALUE" -> {
                // the hub's own RunStarted stands for the upstream's; a reasoning span is its messages
            }
            case "RUN_FINISHED" -> {
                closeAll();
                usage(e.get("usage"));
                return finished(e.get("outcome"));
            }
            case "RUN_ERROR" -> {
                usage(e.get("usage"));
                return new Outcome.Failed(required(e, "message", type), text(e, "code"));
            }
            case "STEP_STARTED" -> ctx.emit(new Event.StepStarted(required(e, "stepName", type)));
            case "STEP_FINISHED" -> ctx.emit(new Event.StepFinished(required(e, "stepName", type)));
            case "TEXT_MESSAGE_START" -> startText(required(e, "messageId", type), role(e));
            case "TEXT_MESSAGE_CONTENT" -> textDelta(required(e, "messageId", type), delta(e, true, type));
            case "TEXT_MESSAGE_END" -> endText(required(e, "messageId", type));
            case "TEXT_MESSAGE_CHUNK" -> {
                String id = text(e, "messageId");
                if (id == null) {
                    id = textChunk != null ? textChunk : Ids.next("msg");
                } else if (textChunk != null && !textChunk.equals(id)) {
                    endText(textChunk);
                }
                textChunk = id;
                startText(id, role(e));
                textDelta(id, delta(e, false, type));
            }
            case "TOOL_CALL_START" -> startCall(required(e, "toolCallId", type), required(e, "toolCallName", type),
                    text(e, "parentMessageId"));
            case "TOOL_CALL_ARGS" -> callArgs(required(e, "toolCallId", type), delta(e, true, type));
            case "TOOL_CALL_END" -> endCall(required(e, "toolCallId", type));
            case "TOOL_CALL_CHUNK" -> {
                String id = text(e, "toolCallId");
                if (id == null) {
                    if (toolChunk == null) {
                        throw new Refused("the AG-UI agent sent a TOOL_CALL_CHUNK without toolCallId that continues no"
                                + " tool call");
                    }
                    id = toolChunk;
                } else if (toolChunk != null && !toolChunk.equals(id)) {
                    endCall(toolChunk);
                }
                if (!calls.containsKey(id)) {
                    String name = text(e, "toolCallName");
                    if (name == null) {
                        throw new Refused("the AG-UI agent sent a TOOL_CALL_CHUNK opening tool call " + id
                                + " without toolCallName");
                    }
                    startCall(id, name, text(e, "parentMessageId"));
                }
                toolChunk = id;
                callArgs(id, delta(e, false, type));
            }
            case "TOOL_CALL_RESULT" -> toolResult(e);
            case "REASONING_MESSAGE_START" -> startReasoning(required(e, "messageId", type));
            case "REASONING_MESSAGE_CONTENT" -> reasoningDelta(required(e, "messageId", type), delta(e, true, type));
            case "REASONING_MESSAGE_END" -> endReasoning(required(e, "messageId", type));
            case "REASONING_MESSAGE_CHUNK" -> {
                String id = text(e, "messageId");
                if (id == null) {
                    id = reasoningChunk != null ? reasoningChunk : Ids.next("reasoning");
                } else if (reasoningChunk != null && !reasoningChunk.equals(id)) {
                    endReasoning(reasoningChunk);
                }
                reasoningChunk = id;
                startReasoning(id);
                reasoningDelta(id, delta(e, false, type));
            }
            case "STATE_SNAPSHOT" -> {
                if (!e.has("snapshot")) {
                    throw new Refused("the AG-UI agent sent a STATE_SNAPSHOT without snapshot");
                }
                JsonNode snapshot = e.get("snapshot");
                ctx.emit(snapshot.isObject() ? new Event.StateSnapshot(snapshot)
                        : new Event.Custom("ag-ui:state_snapshot", snapshot));
            }
            case "STATE_DELTA" -> {
                JsonNode delta = e.get("delta");
                if (delta == null || !delta.isArray()) {
                    throw new Refused("the AG-UI agent sent a STATE_DELTA whose delta is not a JSON Patch array");
                }
                ctx.emit(new Event.StateDelta(delta));
            }
            case "CUSTOM" -> ctx.emit(new Event.Custom(required(e, "name", type), e.get("value")));
            case "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "RAW", "SUBAGENT_STARTED", "SUBAGENT_FINISHED", "SUBAGENT_ERROR" -> {
                ObjectNode value = ((ObjectNode) e).deepCopy();
                value.remove("type");
                value.remove("timestamp");
                ctx.emit(new Event.Custom("ag-ui:" + type.toLowerCase(Locale.ROOT), value));
            }
            default -> {
                // an event type of a later protocol version: nothing the core could show
            }
        }
        return null;
    }

    /**
     * The approval an interrupt asks for. The gateway's own interrupts carry the tool's name,
     * arguments, reasoning and risk in {@code metadata}; other agents' may name only a tool call
     * seen in the stream, or nothing but a reason, which then stands for the tool's name.
     */
    ApprovalRequest approvalFor(JsonNode interrupt) {
        String id = interrupt.path("id").asText();
        String toolCallId = text(interrupt, "toolCallId") != null ? text(interrupt, "toolCallId") : id;
        JsonNode metadata = interrupt.path("metadata");
        Call call = calls.get(toolCallId);
        String toolName = text(metadata, "toolName");
        if (toolName == null) {
            toolName = call != null ? call.name : interrupt.path("reason").asText("approval");
        }
        JsonNode arguments = metadata.path("parameters").isObject() ? metadata.get("parameters")
                : metadata.path("arguments").isObject() ? metadata.get("arguments")
                : call != null ? call.parsedArguments() : Json.object();
        String risk = text(metadata, "riskLevel") != null ? text(metadata, "riskLevel") : text(metadata, "risk");
        return new ApprovalRequest(toolCallId, toolName, text(interrupt, "message"), arguments,
                text(metadata, "reasoning"),
                risk == null ? RiskLevel.HIGH : RiskLevel.fromWire(risk.toLowerCase(Locale.ROOT)).orElse(RiskLevel.HIGH));
    }

    // ---- run end ----------------------------------------------------------------------------

    private Outcome finished(JsonNode outcome) throws Refused {
        String type = outcome == null || outcome.isNull() ? "success" : outcome.path("type").asText("success");
        switch (type) {
            case "interrupt" -> {
                JsonNode interrupts = outcome.get("interrupts");
                if (interrupts == null || !interrupts.isArray() || interrupts.isEmpty()) {
                    throw new Refused("the AG-UI agent sent RUN_FINISHED with an interrupt outcome but no interrupts");
                }
                List<JsonNode> out = new ArrayList<>(interrupts.size());
                for (JsonNode i : interrupts) {
                    if (!i.path("id").isTextual() || !i.path("reason").isTextual()) {
                        throw new Refused("the AG-UI agent sent an interrupt without id and reason: "
                                + UpstreamHttp.shorten(i.toString()));
                    }
                    out.add(i);
                }
                return new Outcome.Interrupted(List.copyOf(out));
            }
            case "cancelled" -> {
                return new Outcome.Cancelled();
            }
            default -> {
                // success, or an outcome of a later version, which 1.0 clients read as success
                return new Outcome.Finished();
            }
        }
    }

    /** Ends what the upstream left open, as its RUN_FINISHED should have. */
    private void closeAll() {
        for (String id : new ArrayList<>(reasonings.keySet())) {
            endReasoning(id);
        }
        for (String id : new ArrayList<>(texts.keySet())) {
            endText(id);
        }
        for (Map.Entry<String, Call> c : calls.entrySet()) {
            if (c.getValue().open) {
                endCall(c.getKey());
            }
        }
    }

    /** TokenUsage entries, one Usage event each. */
    private void usage(JsonNode usage) {
        if (usage == null || !usage.isArray()) {
            return;
        }
        for (JsonNode u : usage) {
            String model = text(u, "model") != null ? text(u, "model") : text(u, "provider") != null
                    ? text(u, "provider") : "unknown";
            ctx.emit(new Event.Usage(model, count(u, "inputTokens"), count(u, "outputTokens"),
                    u.path("reasoningTokens").isIntegralNumber() ? count(u, "reasoningTokens") : null,
                    u.path("cachedInputTokens").isIntegralNumber() ? count(u, "cachedInputTokens") : null));
        }
    }

    private static long count(JsonNode u, String field) {
        JsonNode v = u.get(field);
        return v != null && v.canConvertToLong() ? Math.max(0, v.asLong()) : 0;
    }

    // ---- messages ---------------------------------------------------------------------------

    private void startText(String id, Role role) {
        if (!texts.containsKey(id)) {
            texts.put(id, new StringBuilder());
            ctx.emit(new Event.MessageStarted(id, role));
        }
    }

    private void textDelta(String id, String delta) {
        startText(id, Role.ASSISTANT);
        if (!delta.isEmpty()) {
            texts.get(id).append(delta);
            ctx.emit(new Event.TextDelta(id, delta));
        }
    }

    private void endText(String id) {
        if (id.equals(textChunk)) {
            textChunk = null;
        }
        StringBuilder text = texts.remove(id);
        if (text != null) {
            ctx.emit(new Event.MessageCompleted(id, text.toString(), List.of()));
            added.add(InputMessage.text(id, Role.ASSISTANT, text.toString()));
        }
    }

    private void startReasoning(String id) {
        if (!reasonings.containsKey(id)) {
            reasonings.put(id, new StringBuilder());
            ctx.emit(new Event.ReasoningStarted(id));
        }
    }

    private void reasoningDelta(String id, String delta) {
        startReasoning(id);
        if (!delta.isEmpty()) {
            reasonings.get(id).append(delta);
            ctx.emit(new Event.ReasoningDelta(id, delta));
        }
    }

    private void endReasoning(String id) {
        if (id.equals(reasoningChunk)) {
            reasoningChunk = null;
        }
        StringBuilder text = reasonings.remove(id);
        if (text != null) {
            ctx.emit(new Event.ReasoningCompleted(id, text.toString()));
        }
    }

    private void startCall(String id, String name, String parentMessageId) {
        Call existing = calls.get(id);
        if (existing == null || !existing.open) {
            calls.put(id, new Call(name));
            ctx.emit(new Event.ToolCallStarted(id, name, parentMessageId));
        }
    }

    private void callArgs(String id, String delta) {
        Call call = calls.get(id);
        // Arguments of a call never started have no name to start it with; the official client drops them too.
        if (call != null && call.open && !delta.isEmpty()) {
            call.arguments.append(delta);
            ctx.emit(new Event.ToolCallArgs(id, delta));
        }
    }

    private void endCall(String id) {
        if (id.equals(toolChunk)) {
            toolChunk = null;
        }
        Call call = calls.get(id);
        if (call != null && call.open) {
            call.open = false;
            ctx.emit(new Event.ToolCallCompleted(id, call.name, call.parsedArguments()));
            added.add(new InputMessage(id, Role.ASSISTANT, "",
                    List.of(new ToolCallRef(id, call.name, call.parsedArguments().toString())), null, null));
        }
    }

    private void toolResult(JsonNode e) throws Refused {
        String type = "TOOL_CALL_RESULT";
        String messageId = required(e, "messageId", type);
        String toolCallId = required(e, "toolCallId", type);
        JsonNode content = e.get("content");
        String text;
        if (content != null && content.isTextual()) {
            text = content.textValue();
        } else if (content != null && content.isArray()) {
            StringBuilder sb = new StringBuilder();
            content.forEach(part -> {
                if ("text".equals(part.path("type").asText())) {
                    sb.append(part.path("text").asText());
                }
            });
            text = sb.toString();
        } else {
            throw new Refused("the AG-UI agent sent a TOOL_CALL_RESULT whose content is not text or content parts");
        }
        endCall(toolCallId);
        Call call = calls.get(toolCallId);
        String name = call != null ? call.name : "unknown";
        ctx.emit(new Event.ToolResult(toolCallId, name, call != null ? call.parsedArguments() : Json.object(), true, text,
                messageId));
        added.add(new InputMessage(messageId, Role.TOOL, text, List.of(), toolCallId, name));
    }

    // ---- fields -----------------------------------------------------------------------------

    private static Role role(JsonNode e) {
        String role = text(e, "role");
        return role == null ? Role.ASSISTANT : Role.fromWire(role).filter(r -> r != Role.TOOL).orElse(Role.ASSISTANT);
    }

    private static String delta(JsonNode e, boolean required, String type) throws Refused {
        JsonNode d = e.get("delta");
        if (d == null || d.isNull()) {
            if (required) {
                throw new Refused("the AG-UI agent sent " + type + " without delta");
            }
            return "";
        }
        if (!d.isTextual()) {
            throw new Refused("the AG-UI agent sent " + type + " whose delta is not a string");
        }
        return d.textValue();
    }

    private static String required(JsonNode e, String field, String type) throws Refused {
        JsonNode v = e.get(field);
        if (v == null || !v.isTextual() || v.textValue().isEmpty()) {
            throw new Refused("the AG-UI agent sent " + type
                    + " without " + field + ": " + UpstreamHttp.shorten(e.toString()));
        }
        return v.textValue();
    }

    private static String text(JsonNode e, String field) {
        JsonNode v = e.get(field);
        return v != null && v.isTextual() && !v.textValue().isEmpty() ? v.textValue() : null;
    }
}
