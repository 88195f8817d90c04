package dev.switchboard.adapter.agentscope;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
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
import static dev.switchboard.core.spi.JsonInput.invalid;
import static dev.switchboard.core.spi.JsonInput.missing;
import static dev.switchboard.core.spi.JsonInput.optionalBoolean;
import static dev.switchboard.core.spi.JsonInput.optionalId;
import static dev.switchboard.core.spi.JsonInput.optionalString;
import static dev.switchboard.core.spi.JsonInput.requiredBoolean;
import static dev.switchboard.core.spi.JsonInput.requiredId;
import static dev.switchboard.core.spi.JsonInput.requiredString;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Turns an {@code AgentRequest} body into commands: a run started by its newest user message, or,
 * when its input holds {@code mcp_approval_response} messages, the decisions that continue a waiting
 * run. Field names and types follow the reference runtime's {@code AgentRequest} and {@code Message}.
 *
 * <p>{@code input} is a list of messages; a bare string is taken as one user message, which is what
 * a person typing a request by hand sends first. An optional field sent as JSON {@code null} counts as
 * absent, as it does for the reference's pydantic models; unknown fields are ignored.
 */
final class AgentScopeDecoder {
    private static final String ROLES = "one of user, assistant, system, tool";
    private static final String PART_TYPES = "one of text, image, data, audio, file, refusal, video";
    private static final String INPUT_RULE = "a list of messages, or a string (one user message)";
    /** Request fields passed on to the runtime in {@code StartRun.metadata}, under the same names. */
    private static final List<String> STRING_OPTIONS = List.of("model", "user_id", "id");
    private static final List<String> NUMBER_OPTIONS =
            List.of("temperature", "top_p", "frequency_penalty", "presence_penalty");
    private static final List<String> INTEGER_OPTIONS = List.of("max_tokens", "n", "seed");

    private final int maxContentChars;

    AgentScopeDecoder(int maxContentChars) {
        this.maxContentChars = maxContentChars;
    }

    /**
     * What the exchange needs to know of a decoded request: the conversation, whether the answer
     * streams, and the run it starts, or for decisions (which continue a run started elsewhere) the
     * approvals they answer.
     */
    record Request(String sessionId, boolean stream, String runId, Set<String> approvalIds) {
        Request {
            approvalIds = Set.copyOf(approvalIds);
        }
    }

    /** A decoded body, and the request it carried if it was valid. */
    record Decoding(Decoded result, Request request) {
    }

    Decoding decode(String text) {
        JsonNode root;
        try {
            root = Json.parseStrict(text);
        } catch (JsonProcessingException e) {
            // also covers StreamConstraintsException: nesting, number or string length over the limits
            return refused(Decoded.fail(ErrorCode.INVALID_JSON, "the request body is not valid JSON: "
                    + e.getOriginalMessage()));
        }
        if (!root.isObject()) {
            return refused(Decoded.fail(ErrorCode.INVALID_JSON, "the request body is an AgentRequest JSON object"));
        }
        try {
            return request(root);
        } catch (Refused r) {
            return refused(r.failure());
        }
    }

    private static Decoding refused(Decoded failure) {
        return new Decoding(failure, null);
    }

    private Decoding request(JsonNode root) throws Refused {
        boolean stream = optionalBoolean(root, "stream", true);
        String sessionId = optionalId(root, "session_id", "session_id");
        JsonNode input = root.get("input");
        if (absent(input)) {
            throw missing("input", INPUT_RULE);
        }
        if (!input.isArray() && !input.isTextual()) {
            throw invalid("input", INPUT_RULE);
        }
        List<InputMessage> messages = new ArrayList<>();
        List<Command.DecideApproval> decisions = new ArrayList<>();
        int newestUser = -1;
        // Where the newest user message's text is, for the error when it has none.
        String newestUserText = null;
        if (input.isTextual()) {
            // One user message; a string has no elements, so the loop below reads nothing more.
            checkLength(input.textValue(), "input", maxContentChars);
            messages.add(InputMessage.text(Ids.next("msg"), Role.USER, input.textValue()));
            newestUser = 0;
            newestUserText = "input";
        }
        for (int i = 0; i < input.size(); i++) {
            String at = "input[" + i + "]";
            JsonNode m = input.get(i);
            if (!m.isObject()) {
                throw invalid(at, "a message object");
            }
            String type = optionalString(m, "type", at + ".type");
            // The reference writes lower-case types; its Java port writes the enum names.
            type = type == null ? AgentScopeEvents.MESSAGE : type.toLowerCase(Locale.ROOT);
            switch (type) {
                case AgentScopeEvents.MESSAGE -> {
                    InputMessage message = textMessage(m, at);
                    if (message.role() == Role.USER) {
                        newestUser = messages.size();
                        newestUserText = at + ".content";
                    }
                    messages.add(message);
                }
                case AgentScopeEvents.FUNCTION_CALL, "plugin_call" -> messages.add(functionCall(m, at));
                case AgentScopeEvents.FUNCTION_CALL_OUTPUT, "plugin_call_output" -> messages.addAll(functionOutputs(m, at));
                case AgentScopeEvents.MCP_APPROVAL_RESPONSE -> decisions.add(approvalResponse(m, at));
                default -> {
                    // reasoning, heartbeat, mcp_* records and the like: nothing the event core keeps
                }
            }
        }
        List<ToolSpec> tools = tools(root.get("tools"));
        ObjectNode metadata = metadata(root);

        if (!decisions.isEmpty()) {
            if (sessionId == null) {
                throw missing("session_id", "the session whose run waits for the approval");
            }
            // The request joins the session's live events first, so it sees everything the
            // continued run emits once the hub resumes it. Other input messages are not a new run.
            List<Command> commands = new ArrayList<>();
            commands.add(Command.Subscribe.liveOnly(sessionId));
            commands.addAll(decisions);
            Set<String> approvalIds = new HashSet<>();
            decisions.forEach(d -> approvalIds.add(d.approvalId()));
            return new Decoding(new Decoded.Commands(commands), new Request(sessionId, stream, null, approvalIds));
        }
        if (newestUser < 0) {
            throw missing("input", "a message with role user and text content");
        }
        if (messages.get(newestUser).content().isBlank()) {
            throw missing(newestUserText, "the user's text");
        }
        if (sessionId == null) {
            sessionId = Ids.next("session");
        }
        String runId = Ids.next("run");
        Command.StartRun start = new Command.StartRun(sessionId, runId, null, messages, tools, null, null, null,
                metadata);
        return new Decoding(Decoded.of(start), new Request(sessionId, stream, runId, Set.of()));
    }

    // ---- messages -------------------------------------------------------------------------

    private InputMessage textMessage(JsonNode m, String at) throws Refused {
        JsonNode roleNode = m.get("role");
        if (absent(roleNode)) {
            throw missing(at + ".role", ROLES);
        }
        if (!roleNode.isTextual()) {
            throw invalid(at + ".role", ROLES);
        }
        Role role = switch (roleNode.textValue()) {
            case "user" -> Role.USER;
            case "assistant" -> Role.ASSISTANT;
            case "system" -> Role.SYSTEM;
            case "tool" -> Role.TOOL;
            default -> throw invalid(at + ".role", ROLES);
        };
        String text = text(m, at);
        if (role == Role.USER) {
            // Only what a person types is held to the content limit: a resent history may hold long answers.
            checkLength(text, at + ".content", maxContentChars);
        }
        return InputMessage.text(id(m, at), role, text);
    }

    /**
     * The text of a message: a plain string, or its text parts joined in order. Image, data and
     * other parts are checked and left out: the event core keeps text only.
     */
    private static String text(JsonNode m, String at) throws Refused {
        JsonNode content = m.get("content");
        if (absent(content)) {
            return "";
        }
        if (content.isTextual()) {
            return content.textValue();
        }
        StringBuilder text = new StringBuilder();
        for (Part part : parts(content, at + ".content")) {
            switch (part.type) {
                case "text" -> {
                    String t = optionalString(part.node, "text", part.at + ".text");
                    if (t != null) {
                        text.append(t);
                    }
                }
                case "image" -> optionalString(part.node, "image_url", part.at + ".image_url");
                case "data" -> optionalData(part);
                default -> {
                }
            }
        }
        return text.toString();
    }

    /** An assistant message calling tools: each data part is a {@code FunctionCall}. */
    private static InputMessage functionCall(JsonNode m, String at) throws Refused {
        List<ToolCallRef> calls = new ArrayList<>();
        for (Part part : parts(m.get("content"), at + ".content")) {
            ObjectNode data = part.type.equals("data") ? optionalData(part) : null;
            if (data != null) {
                String where = part.at + ".data";
                String callId = requiredId(data, "call_id", where + ".call_id");
                String name = requiredId(data, "name", where + ".name");
                JsonNode arguments = data.get("arguments");
                calls.add(new ToolCallRef(callId, name, absent(arguments) ? null : Json.text(arguments)));
            }
        }
        return new InputMessage(id(m, at), Role.ASSISTANT, "", calls, null, null);
    }

    /**
     * Tool results: each data part is a {@code FunctionCallOutput} and becomes one tool message; a
     * second part's id is the message id with {@code #1} and so on appended, so resending keeps it.
     */
    private static List<InputMessage> functionOutputs(JsonNode m, String at) throws Refused {
        String id = id(m, at);
        List<InputMessage> out = new ArrayList<>();
        for (Part part : parts(m.get("content"), at + ".content")) {
            ObjectNode data = part.type.equals("data") ? optionalData(part) : null;
            if (data != null) {
                String where = part.at + ".data";
                String callId = requiredId(data, "call_id", where + ".call_id");
                String name = optionalString(data, "name", where + ".name");
                String output = Json.text(data.get("output"));
                out.add(new InputMessage(out.isEmpty() ? id : id + "#" + out.size(), Role.TOOL, output, List.of(),
                        callId, name));
            }
        }
        return out;
    }

    /**
     * An {@code mcp_approval_response}: its data part holds {@code approval_request_id},
     * {@code approve} and an optional {@code reason}, as the OpenAI Responses API item does.
     */
    private Command.DecideApproval approvalResponse(JsonNode m, String at) throws Refused {
        String rule = "a data part {approval_request_id, approve, reason}";
        for (Part part : parts(m.get("content"), at + ".content")) {
            ObjectNode data = part.type.equals("data") ? optionalData(part) : null;
            if (data != null) {
                String where = part.at + ".data";
                String approvalId = requiredId(data, "approval_request_id", where + ".approval_request_id");
                boolean approve = requiredBoolean(data, "approve", where + ".approve");
                String reason = optionalString(data, "reason", where + ".reason");
                if (reason != null) {
                    checkLength(reason, where + ".reason", maxContentChars);
                }
                return new Command.DecideApproval(approvalId, approve, reason, data);
            }
        }
        throw missing(at + ".content", rule);
    }

    /** One content part: its node, its type and where it is, for errors. */
    private record Part(JsonNode node, String type, String at) {
    }

    private static List<Part> parts(JsonNode content, String at) throws Refused {
        if (absent(content)) {
            return List.of();
        }
        if (!content.isArray()) {
            throw invalid(at, "a list of content parts");
        }
        List<Part> parts = new ArrayList<>(content.size());
        for (int j = 0; j < content.size(); j++) {
            String partAt = at + "[" + j + "]";
            JsonNode part = content.get(j);
            if (!part.isObject()) {
                throw invalid(partAt, "a content part object with a type");
            }
            String type = requiredString(part, "type", partAt + ".type");
            switch (type) {
                case "text", "image", "data", "audio", "file", "refusal", "video" -> parts.add(new Part(part, type, partAt));
                default -> throw invalid(partAt + ".type", PART_TYPES);
            }
        }
        return parts;
    }

    /** A data part's {@code data}: an object, or null when the part has none. */
    private static ObjectNode optionalData(Part part) throws Refused {
        JsonNode data = part.node.get("data");
        if (absent(data)) {
            return null;
        }
        if (!data.isObject()) {
            throw invalid(part.at + ".data", "an object");
        }
        return (ObjectNode) data;
    }

    /** The message's own id, so that resending it is recognised; one is made when it has none. */
    private static String id(JsonNode m, String at) throws Refused {
        String id = optionalId(m, "id", at + ".id");
        return id != null ? id : Ids.next("msg");
    }

    // ---- tools and options ----------------------------------------------------------------

    /**
     * Tools in the reference's {@code Tool} shape {@code {type, function: {name, description,
     * parameters}}} or as a bare function object; entries without a name (such as sandbox tool
     * descriptors) are passed over.
     */
    private static List<ToolSpec> tools(JsonNode node) throws Refused {
        if (absent(node)) {
            return List.of();
        }
        if (!node.isArray()) {
            throw invalid("tools", "a list of tools");
        }
        List<ToolSpec> out = new ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) {
            JsonNode tool = node.get(i);
            if (!tool.isObject()) {
                throw invalid("tools[" + i + "]", "a tool object");
            }
            JsonNode function = tool.get("function");
            JsonNode spec = function != null && function.isObject() ? function : tool;
            JsonNode name = spec.get("name");
            if (name == null || !name.isTextual() || name.textValue().isEmpty()) {
                continue;
            }
            JsonNode description = spec.get("description");
            out.add(new ToolSpec(name.textValue(), description != null && description.isTextual()
                    ? description.textValue() : null, spec.get("parameters")));
        }
        return out;
    }

    /** The model, sampling fields, user and request ids, as one object; null when none is given. */
    private static ObjectNode metadata(JsonNode root) throws Refused {
        ObjectNode metadata = Json.object();
        for (String name : STRING_OPTIONS) {
            String value = optionalString(root, name, name);
            if (value != null) {
                metadata.put(name, value);
            }
        }
        for (String name : NUMBER_OPTIONS) {
            JsonNode value = root.get(name);
            if (!absent(value)) {
                if (!value.isNumber()) {
                    throw invalid(name, "a number");
                }
                metadata.set(name, value);
            }
        }
        for (String name : INTEGER_OPTIONS) {
            JsonNode value = root.get(name);
            if (!absent(value)) {
                if (!value.isIntegralNumber()) {
                    throw invalid(name, "an integer");
                }
                metadata.set(name, value);
            }
        }
        JsonNode stop = root.get("stop");
        if (!absent(stop)) {
            boolean strings = stop.isArray();
            for (JsonNode s : stop) {
                strings &= s.isTextual();
            }
            if (!stop.isTextual() && !strings) {
                throw invalid("stop", "a string or a list of strings");
            }
            metadata.set("stop", stop);
        }
        return metadata.isEmpty() ? null : metadata;
    }
}
