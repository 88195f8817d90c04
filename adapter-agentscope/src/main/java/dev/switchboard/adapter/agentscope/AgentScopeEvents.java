package dev.switchboard.adapter.agentscope;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Citation;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.FrameWriter;
import dev.switchboard.core.spi.JsonFrame;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * Builds the three AgentScope objects, {@code response}, {@code message} and {@code content}, as the
 * reference runtime serialises them ({@code model_dump_json()} of {@code AgentResponse}, {@code Message}
 * and the content classes): snake_case keys, every field of the model present, and {@code null} for
 * an optional field without a value.
 */
final class AgentScopeEvents {
    /* Not JsonGenerator.writeTree, which flushes the generator (the frame) after every tree. */
    private static final ObjectWriter TREE_WRITER =
            Json.MAPPER.writer().without(SerializationFeature.FLUSH_AFTER_WRITE_VALUE);
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    static final String SEQUENCE_NUMBER = "sequence_number";

    static final String CREATED = "created";
    static final String IN_PROGRESS = "in_progress";

    /* A text delta's constant parts, encoded once (see JsonFrame). */
    private static final byte[] DELTA_START = JsonFrame.fragment("{\"" + SEQUENCE_NUMBER + "\":");
    private static final byte[] DELTA_MIDDLE = JsonFrame.fragment(",\"object\":\"content\",\"status\":\""
            + IN_PROGRESS + "\",\"error\":null,\"type\":\"text\",\"index\":0,\"delta\":true,\"msg_id\":");
    private static final byte[] DELTA_TEXT = JsonFrame.fragment(",\"text\":");
    private static final byte[] DELTA_END = JsonFrame.fragment("}");

    static final String COMPLETED = "completed";
    static final String FAILED = "failed";
    static final String CANCELED = "canceled";

    static final String MESSAGE = "message";
    static final String FUNCTION_CALL = "function_call";
    static final String FUNCTION_CALL_OUTPUT = "function_call_output";
    static final String MCP_APPROVAL_REQUEST = "mcp_approval_request";
    static final String MCP_APPROVAL_RESPONSE = "mcp_approval_response";

    private AgentScopeEvents() {
    }

    /**
     * An {@code AgentResponse}. {@code createdAt} and {@code completedAt} are epoch seconds, as the
     * reference writes them; {@code completedAt}, {@code output} and {@code error} may be null.
     */
    static ObjectNode response(String id, String status, String sessionId, long createdAt, Long completedAt,
                               ArrayNode output, ObjectNode error) {
        ObjectNode node = event("response", status, error);
        node.put("id", id);
        node.put("created_at", createdAt);
        if (completedAt == null) {
            node.putNull("completed_at");
        } else {
            node.put("completed_at", completedAt);
        }
        node.set("output", output == null ? NODES.nullNode() : output);
        node.putNull("usage");
        node.put("session_id", sessionId);
        return node;
    }

    /**
     * A response's {@code usage}, an open map in the spec, with the token counts of the OpenAI
     * Responses API that the Agent API mirrors.
     */
    static ObjectNode usage(long inputTokens, long outputTokens) {
        ObjectNode node = NODES.objectNode();
        node.put("input_tokens", inputTokens);
        node.put("output_tokens", outputTokens);
        node.put("total_tokens", inputTokens + outputTokens);
        return node;
    }

    /** A {@code Message}; {@code content} is null while the message is only created. */
    static ObjectNode message(String id, String type, String role, String status, ArrayNode content,
                              ObjectNode metadata) {
        ObjectNode node = event("message", status, null);
        node.put("id", id);
        node.put("type", type);
        node.put("role", role);
        node.set("content", content == null ? NODES.nullNode() : content);
        node.putNull("code");
        node.putNull("message");
        node.putNull("usage");
        node.set("metadata", metadata == null ? NODES.nullNode() : metadata);
        return node;
    }

    /** A {@code TextContent} at {@code index} of message {@code msgId}. */
    static ObjectNode text(String msgId, int index, boolean delta, String status, String text) {
        ObjectNode node = content("text", msgId, index, delta, status);
        node.put("text", text);
        return node;
    }

    /**
     * Writes a text delta's {@code content} event straight into its frame: the same keys, in the
     * same order, as {@link #text} with its {@code sequence_number} set, without building the
     * tree. Deltas are most of a stream's events, and the tree cost each one about 800 bytes more
     * allocation and a second serialisation pass (BENCHMARKS.md, text delta table).
     */
    static void writeTextDelta(FrameWriter out, int sequenceNumber, SerializableString msgId, String text)
            throws IOException {
        JsonFrame.open()
                .raw(DELTA_START).number(sequenceNumber)
                .raw(DELTA_MIDDLE).string(msgId)
                .raw(DELTA_TEXT).string(text)
                .raw(DELTA_END)
                .writeTo(out);
    }

    /** A whole {@code DataContent} at {@code index} of message {@code msgId}. */
    static ObjectNode data(String msgId, int index, ObjectNode data) {
        ObjectNode node = content("data", msgId, index, false, COMPLETED);
        node.set("data", data);
        return node;
    }

    /** {@code FunctionCall} data: the call's id, tool name and arguments as a JSON string. */
    static ObjectNode functionCall(String callId, String name, JsonNode arguments) {
        ObjectNode data = Json.object();
        data.put("call_id", callId);
        data.put("name", name);
        data.put("arguments", arguments.toString());
        return data;
    }

    /** {@code FunctionCallOutput} data: the call's id, tool name and output text. */
    static ObjectNode functionCallOutput(String callId, String name, String output) {
        ObjectNode data = Json.object();
        data.put("call_id", callId);
        data.put("name", name);
        data.put("output", output);
        return data;
    }

    /**
     * {@code McpApprovalRequest} data. Its {@code id} is the approval id that an
     * {@code mcp_approval_response} names as {@code approval_request_id}.
     */
    static ObjectNode approvalRequest(String approvalId, String name, JsonNode arguments, String serverLabel) {
        ObjectNode data = Json.object();
        data.put("id", approvalId);
        data.put("name", name);
        data.put("arguments", arguments.toString());
        data.put("server_label", serverLabel);
        return data;
    }

    /** Message metadata carrying an answer's citations, or null when it cites nothing. */
    static ObjectNode citations(List<Citation> citations) {
        if (citations.isEmpty()) {
            return null;
        }
        ObjectNode metadata = Json.object();
        ArrayNode list = metadata.putArray("citations");
        for (Citation c : citations) {
            ObjectNode item = list.addObject();
            item.put("id", c.id());
            item.put("source_type", c.sourceType());
            item.put("title", c.title());
            item.put("url", c.url());
            if (c.page() == null) {
                item.putNull("page");
            } else {
                item.put("page", c.page());
            }
        }
        return metadata;
    }

    /** An {@code Error}: {@code {code, message}}. */
    static ObjectNode error(ErrorCode code, String message) {
        ObjectNode error = Json.object();
        error.put("code", code.wireCode());
        error.put("message", message);
        return error;
    }

    /** Writes one object as one frame. */
    static void write(FrameWriter out, ObjectNode node) throws IOException {
        JsonGenerator gen = out.begin();
        TREE_WRITER.writeValue(gen, node);
        out.end();
    }

    /**
     * A whole HTTP error body, {@code {"error":{"code","message","details"?}}}: the reference's
     * {@code Error} model under the key an {@code AgentResponse} keeps it in. Not an event.
     */
    static void errorBody(FrameWriter out, GatewayError gatewayError) throws IOException {
        ObjectNode error = error(gatewayError.code(), gatewayError.message());
        if (!gatewayError.details().isEmpty()) {
            ObjectNode details = error.putObject("details");
            for (Map.Entry<String, String> detail : gatewayError.details().entrySet()) {
                details.put(detail.getKey(), detail.getValue());
            }
        }
        ObjectNode body = Json.object();
        body.set("error", error);
        write(out, body);
    }

    /** The fields every event has; {@code sequence_number} is set when the event is sent. */
    private static ObjectNode event(String object, String status, ObjectNode error) {
        ObjectNode node = Json.object();
        node.putNull(SEQUENCE_NUMBER);
        node.put("object", object);
        node.put("status", status);
        node.set("error", error == null ? NODES.nullNode() : error);
        return node;
    }

    private static ObjectNode content(String type, String msgId, int index, boolean delta, String status) {
        ObjectNode node = event("content", status, null);
        node.put("type", type);
        node.put("index", index);
        node.put("delta", delta);
        node.put("msg_id", msgId);
        return node;
    }
}
