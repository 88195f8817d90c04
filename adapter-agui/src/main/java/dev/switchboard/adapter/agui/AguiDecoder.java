package dev.switchboard.adapter.agui;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Ids;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Json;
import dev.switchboard.core.Role;
import dev.switchboard.core.ToolCallRef;
import dev.switchboard.core.ToolSpec;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.JsonInput.Refused;

import static dev.switchboard.core.spi.JsonInput.absent;
import static dev.switchboard.core.spi.JsonInput.checkLength;
import static dev.switchboard.core.spi.JsonInput.echo;
import static dev.switchboard.core.spi.JsonInput.invalid;
import static dev.switchboard.core.spi.JsonInput.missing;
import static dev.switchboard.core.spi.JsonInput.optionalId;
import static dev.switchboard.core.spi.JsonInput.optionalString;
import static dev.switchboard.core.spi.JsonInput.requiredBoolean;
import static dev.switchboard.core.spi.JsonInput.requiredId;
import static dev.switchboard.core.spi.JsonInput.requiredString;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Turns client-to-server AG-UI frames into commands: a {@code RunAgentInput} in either the
 * official 1.0 form ({@code @ag-ui/core} {@code RunAgentInputSchema}) or the AGORA profile's looser
 * form, and on the AGORA WebSocket also the {@code agora:tool_approval_response} custom event.
 *
 * <p>An optional field sent as JSON {@code null} counts as absent (the official client strips such
 * nulls before sending); a required one sent as {@code null} is reported missing.
 */
final class AguiDecoder {
    static final String APPROVAL_RESPONSE = "agora:tool_approval_response";

    private static final String ROLES = "one of user, assistant, system, developer, tool, activity, reasoning";

    /** Which shape of input a transport accepts. */
    enum Form {
        /** The official AG-UI 1.0 {@code RunAgentInput} on {@code POST /agui}. */
        OFFICIAL,
        /**
         * The AGORA WebSocket profile: {@code runId}, message ids and tool descriptions may be left
         * out, {@code context} may be an object, and approval responses arrive as custom events.
         */
        AGORA
    }

    private final int maxContentChars;
    private final Form form;

    AguiDecoder(int maxContentChars, Form form) {
        this.maxContentChars = maxContentChars;
        this.form = form;
    }

    /** Parses one frame as a single JSON document; never null. */
    static JsonNode parse(String text) throws JsonProcessingException {
        return Json.parseStrict(text);
    }

    /** Whether a parsed first frame looks like this dialect's: a run input or an approval response. */
    static boolean looksLikeAgui(JsonNode root) {
        if (!root.isObject()) {
            return false;
        }
        if (root.has("threadId") || root.has("messages")) {
            return true;
        }
        return "CUSTOM".equals(root.path("type").textValue())
                && APPROVAL_RESPONSE.equals(root.path("name").textValue());
    }

    /**
     * What a {@code RunAgentInput} asked for: its thread, run, parent run and starting state, and
     * whether it resumes an interrupted run rather than starting one.
     */
    record RunInput(String threadId, String runId, String parentRunId, JsonNode state, boolean resumes) {
    }

    /** A decoded frame, and the run input it carried if it was one. */
    record Decoding(Decoded result, RunInput input) {
    }

    Decoded decode(String text) {
        return decodeFrame(text).result();
    }

    Decoding decodeFrame(String text) {
        JsonNode root;
        try {
            root = parse(text);
        } catch (JsonProcessingException e) {
            // also covers StreamConstraintsException: nesting, number or string length over the limits
            return refused(Decoded.fail(ErrorCode.INVALID_JSON, "the message is not valid JSON: " + e.getOriginalMessage()));
        }
        if (!root.isObject()) {
            return refused(Decoded.fail(ErrorCode.INVALID_JSON, form == Form.OFFICIAL
                    ? "the request body is a RunAgentInput JSON object"
                    : "an AG-UI message is a JSON object: a RunAgentInput or a CUSTOM event"));
        }
        try {
            JsonNode type = root.get("type");
            if (form == Form.AGORA && !absent(type)) {
                return new Decoding(approvalResponse(root, type), null);
            }
            return runInput(root);
        } catch (Refused r) {
            return refused(r.failure());
        }
    }

    private static Decoding refused(Decoded failure) {
        return new Decoding(failure, null);
    }

    // ---- agora:tool_approval_response -----------------------------------------------------

    private Decoded approvalResponse(JsonNode root, JsonNode type) throws Refused {
        JsonNode name = root.get("name");
        if (!"CUSTOM".equals(type.textValue())) {
            return unknownType("unknown message type " + echo(type), Map.of("type", echo(type)));
        }
        if (name == null || !APPROVAL_RESPONSE.equals(name.textValue())) {
            return unknownType("unknown CUSTOM event " + echo(name), Map.of("type", "CUSTOM", "name", echo(name)));
        }
        JsonNode value = root.get("value");
        if (absent(value)) {
            throw missing("value", "an object with approvalId, approved and optional feedback");
        }
        if (!value.isObject()) {
            throw invalid("value", "an object with approvalId, approved and optional feedback");
        }
        String approvalId = requiredId(value, "approvalId", "value.approvalId");
        boolean approved = requiredBoolean(value, "approved", "value.approved");
        String feedback = optionalString(value, "feedback", "value.feedback");
        if (feedback != null) {
            checkLength(feedback, "value.feedback", maxContentChars);
        }
        return Decoded.of(new Command.DecideApproval(approvalId, approved, feedback, null));
    }

    private static Decoded unknownType(String what, Map<String, String> details) {
        return new Decoded.Failure(new GatewayError(ErrorCode.UNKNOWN_TYPE, what
                + "; a client sends a RunAgentInput (no type) or a CUSTOM event named " + APPROVAL_RESPONSE, details));
    }

    // ---- RunAgentInput --------------------------------------------------------------------

    private Decoding runInput(JsonNode input) throws Refused {
        String threadId = requiredId(input, "threadId", "threadId");
        String runId = form == Form.OFFICIAL ? requiredId(input, "runId", "runId") : optionalId(input, "runId", "runId");
        if (runId == null) {
            runId = Ids.next("run");
        }
        String parentRunId = optionalString(input, "parentRunId", "parentRunId");
        optionalString(input, "protocolVersion", "protocolVersion");
        List<InputMessage> messages = messages(input.get("messages"));
        List<ToolSpec> tools = tools(input.get("tools"));
        JsonNode context = context(input.get("context"));
        JsonNode state = present(input.get("state"));
        JsonNode forwardedProps = present(input.get("forwardedProps"));
        List<Command.DecideApproval> decisions = resume(input.get("resume"));

        RunInput asked = new RunInput(threadId, runId, parentRunId, state, !decisions.isEmpty());
        if (asked.resumes()) {
            // A resume continues the interrupted run: this request joins the conversation's live
            // events first, so it sees everything the continued run emits once the hub resumes it.
            return new Decoding(Decoded.of(Command.Subscribe.liveOnly(threadId),
                    new Command.Resume(threadId, decisions)), asked);
        }
        return new Decoding(Decoded.of(new Command.StartRun(threadId, runId, parentRunId, messages, tools, context,
                state, forwardedProps, null)), asked);
    }

    private List<InputMessage> messages(JsonNode node) throws Refused {
        if (absent(node)) {
            throw missing("messages", "an array of messages");
        }
        if (!node.isArray()) {
            throw invalid("messages", "an array of messages");
        }
        List<InputMessage> out = new ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) {
            InputMessage message = message(node.get(i), "messages[" + i + "]");
            if (message != null) {
                out.add(message);
            }
        }
        return out;
    }

    /** One message, or null for the activity and reasoning roles the event core does not keep. */
    private InputMessage message(JsonNode m, String at) throws Refused {
        if (!m.isObject()) {
            throw invalid(at, "an object with a role");
        }
        JsonNode roleNode = m.get("role");
        if (absent(roleNode)) {
            throw missing(at + ".role", ROLES);
        }
        if (!roleNode.isTextual()) {
            throw invalid(at + ".role", ROLES);
        }
        String role = roleNode.textValue();
        String id = form == Form.OFFICIAL ? requiredString(m, "id", at + ".id") : optionalString(m, "id", at + ".id");
        if (id == null) {
            id = Ids.next("msg");
        }
        return switch (role) {
            // Only what a person types is held to the content limit: clients resend the whole
            // history, and an agent's long answer must not make every later run on the thread fail.
            case "user" -> new InputMessage(id, Role.USER,
                    checkLength(textOrParts(m, at), at + ".content", maxContentChars), List.of(), null, name(m, at));
            case "system", "developer" -> new InputMessage(id, role.equals("system") ? Role.SYSTEM : Role.DEVELOPER,
                    requiredString(m, "content", at + ".content"), List.of(), null, name(m, at));
            case "assistant" -> {
                String content = optionalString(m, "content", at + ".content");
                yield new InputMessage(id, Role.ASSISTANT, content, toolCalls(m.get("toolCalls"), at + ".toolCalls"),
                        null, name(m, at));
            }
            case "tool" -> {
                String content = textOrParts(m, at);
                String toolCallId = requiredString(m, "toolCallId", at + ".toolCallId");
                optionalString(m, "error", at + ".error");
                yield new InputMessage(id, Role.TOOL, content, List.of(), toolCallId, null);
            }
            case "activity" -> {
                requiredString(m, "activityType", at + ".activityType");
                JsonNode content = m.get("content");
                if (absent(content)) {
                    throw missing(at + ".content", "an object");
                }
                if (!content.isObject()) {
                    throw invalid(at + ".content", "an object");
                }
                yield null;
            }
            case "reasoning" -> {
                requiredString(m, "content", at + ".content");
                yield null;
            }
            default -> throw invalid(at + ".role", ROLES);
        };
    }

    private String name(JsonNode m, String at) throws Refused {
        return optionalString(m, "name", at + ".name");
    }

    /** Content that is a string or an array of content parts, whose text parts are joined in order. */
    private String textOrParts(JsonNode m, String at) throws Refused {
        String field = at + ".content";
        String rule = "a string or an array of content parts";
        JsonNode content = m.get("content");
        if (absent(content)) {
            throw missing(field, rule);
        }
        if (content.isTextual()) {
            return content.textValue();
        }
        if (!content.isArray()) {
            throw invalid(field, rule);
        }
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < content.size(); i++) {
            JsonNode part = content.get(i);
            String partAt = field + "[" + i + "]";
            if (!part.isObject()) {
                throw invalid(partAt, "a content part object with a type");
            }
            String type = requiredString(part, "type", partAt + ".type");
            if (type.equals("text")) {
                text.append(requiredString(part, "text", partAt + ".text"));
            }
        }
        return text.toString();
    }

    private List<ToolCallRef> toolCalls(JsonNode node, String at) throws Refused {
        if (absent(node)) {
            return List.of();
        }
        String rule = "an array of {id, type: \"function\", function: {name, arguments}}";
        if (!node.isArray()) {
            throw invalid(at, rule);
        }
        List<ToolCallRef> out = new ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) {
            JsonNode call = node.get(i);
            String callAt = at + "[" + i + "]";
            if (!call.isObject()) {
                throw invalid(callAt, rule);
            }
            String id = requiredString(call, "id", callAt + ".id");
            String type = requiredString(call, "type", callAt + ".type");
            if (!type.equals("function")) {
                throw invalid(callAt + ".type", "\"function\"");
            }
            JsonNode function = call.get("function");
            if (absent(function)) {
                throw missing(callAt + ".function", "an object with name and arguments");
            }
            if (!function.isObject()) {
                throw invalid(callAt + ".function", "an object with name and arguments");
            }
            String name = requiredString(function, "name", callAt + ".function.name");
            String arguments = requiredString(function, "arguments", callAt + ".function.arguments");
            out.add(new ToolCallRef(id, name, arguments));
        }
        return out;
    }

    private List<ToolSpec> tools(JsonNode node) throws Refused {
        if (absent(node)) {
            return List.of();
        }
        if (!node.isArray()) {
            throw invalid("tools", "an array of {name, description, parameters}");
        }
        List<ToolSpec> out = new ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) {
            JsonNode tool = node.get(i);
            String at = "tools[" + i + "]";
            if (!tool.isObject()) {
                throw invalid(at, "an object with name, description and parameters");
            }
            String name = requiredString(tool, "name", at + ".name");
            String description = form == Form.OFFICIAL
                    ? requiredString(tool, "description", at + ".description")
                    : optionalString(tool, "description", at + ".description");
            out.add(new ToolSpec(name, description, present(tool.get("parameters"))));
        }
        return out;
    }

    private JsonNode context(JsonNode node) throws Refused {
        if (absent(node)) {
            return null;
        }
        if (node.isObject() && form == Form.AGORA) {
            return node;
        }
        String rule = form == Form.OFFICIAL
                ? "an array of {description, value}"
                : "an array of {description, value} or an object";
        if (!node.isArray()) {
            throw invalid("context", rule);
        }
        for (int i = 0; i < node.size(); i++) {
            JsonNode item = node.get(i);
            String at = "context[" + i + "]";
            if (!item.isObject()) {
                throw invalid(at, "an object with description and value strings");
            }
            requiredString(item, "description", at + ".description");
            requiredString(item, "value", at + ".value");
        }
        return node;
    }

    private List<Command.DecideApproval> resume(JsonNode node) throws Refused {
        if (absent(node)) {
            return List.of();
        }
        String rule = "an array of {interruptId, status: \"resolved\" or \"cancelled\", payload}";
        if (!node.isArray()) {
            throw invalid("resume", rule);
        }
        List<Command.DecideApproval> out = new ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) {
            JsonNode entry = node.get(i);
            String at = "resume[" + i + "]";
            if (!entry.isObject()) {
                throw invalid(at, rule);
            }
            String interruptId = requiredString(entry, "interruptId", at + ".interruptId");
            String status = requiredString(entry, "status", at + ".status");
            if (!status.equals("resolved") && !status.equals("cancelled")) {
                throw invalid(at + ".status", "\"resolved\" or \"cancelled\"");
            }
            JsonNode payload = present(entry.get("payload"));
            // Only an explicit {"approved": true} approves: a bare "resolved" must not run a risky tool.
            boolean approved = status.equals("resolved") && payload != null && payload.isObject()
                    && payload.path("approved").isBoolean() && payload.get("approved").booleanValue();
            out.add(new Command.DecideApproval(interruptId, approved, feedback(payload), payload));
        }
        return out;
    }

    private static String feedback(JsonNode payload) {
        if (payload == null || !payload.isObject()) {
            return null;
        }
        JsonNode feedback = payload.get("feedback");
        if (feedback != null && feedback.isTextual()) {
            return feedback.textValue();
        }
        JsonNode comment = payload.get("comment");
        return comment != null && comment.isTextual() ? comment.textValue() : null;
    }

    // ---- field helpers --------------------------------------------------------------------

    /** The node, or null when it is absent or JSON null. */
    private static JsonNode present(JsonNode node) {
        return absent(node) ? null : node;
    }
}
