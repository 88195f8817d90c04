package dev.switchboard.adapter.agentscope;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Ids;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.FrameWriter;
import dev.switchboard.core.spi.JsonText;
import dev.switchboard.core.spi.HttpExchange;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

import static dev.switchboard.adapter.agentscope.AgentScopeEvents.COMPLETED;

/**
 * One {@code POST /process} request: an {@code AgentRequest} answered with one core run as the
 * reference runtime's event stream, {@code response} created and in progress, then each output
 * message (created, its content, completed), then the final {@code response} carrying every
 * completed message as {@code output}; or, for {@code stream: false}, that final response alone as
 * the whole body. {@code sequence_number} counts the frames of the request from 0.
 *
 * <p>Like the OpenAI Responses API this protocol mirrors, a response that needs a tool approval ends
 * with the {@code mcp_approval_request} message; the run waits in the gateway until a later request
 * answers it with an {@code mcp_approval_response}, and that request's response shows the rest of it.
 */
final class AgentScopeExchange implements HttpExchange {
    /** The id of the message whose deltas stream, encoded once for all of them. */
    private final JsonText.Repeated deltaMessageId = new JsonText.Repeated();
    /** The {@code server_label} of approval requests: the gateway asks, not an MCP server of the client's. */
    static final String SERVER_LABEL = "switchboard";

    private final AgentScopeDecoder decoder;
    private final LongSupplier clock;

    private boolean streaming = true;
    /** The core run this response shows: the one the request started, or the one a decision continues. */
    private String coreRunId;
    /** The approvals a decision request answers; empty for a request that starts a run. */
    private Set<String> decidedApprovals = Set.of();
    private String sessionId;
    private String responseId;
    private long createdAt;
    private boolean started;
    private boolean done;
    private int nextSequence;
    private final ArrayNode output = JsonNodeFactory.instance.arrayNode();
    /** Tokens the run's model calls used, for the final response's {@code usage}. */
    private long inputTokens;
    private long outputTokens;
    private boolean reportsUsage;
    /** Text messages begun and not yet completed, by core message id. */
    private final Map<String, OpenMessage> openMessages = new LinkedHashMap<>();

    AgentScopeExchange(int maxContentChars, LongSupplier clock) {
        this.decoder = new AgentScopeDecoder(maxContentChars);
        this.clock = clock;
    }

    /** A text message being streamed: its role and the text of its deltas so far. */
    private static final class OpenMessage {
        final String id;
        final String role;
        final StringBuilder text = new StringBuilder();

        OpenMessage(String id, String role) {
            this.id = id;
            this.role = role;
        }
    }

    @Override
    public Decoded decode(String text) {
        AgentScopeDecoder.Decoding decoding = decoder.decode(text);
        if (decoding.request() != null) {
            streaming = decoding.request().stream();
            sessionId = decoding.request().sessionId();
            coreRunId = decoding.request().runId();
            decidedApprovals = decoding.request().approvalIds();
        }
        return decoding.result();
    }

    @Override
    public boolean streaming() {
        return streaming;
    }

    @Override
    public boolean done() {
        return done;
    }

    @Override
    public void encode(Envelope envelope, FrameWriter out) throws IOException {
        if (done) {
            return;
        }
        if (coreRunId == null) {
            if (!continuesTheDecidedRun(envelope.event())) {
                return;
            }
            coreRunId = envelope.runId();
        } else if (!coreRunId.equals(envelope.runId())) {
            // Another run of the session, such as one already active when this request came: not
            // part of this response.
            return;
        }
        long ts = envelope.timestamp();
        if (!started) {
            start(envelope, out);
        }
        Event event = envelope.event();
        switch (event.kind()) {
            // The Agent API has no reasoning message type (spec, "Message Types"); nothing is sent for it.
            case RUN_STARTED, STEP_STARTED, STEP_FINISHED, TOOL_CALL_STARTED, TOOL_CALL_ARGS, STATE_SNAPSHOT,
                 STATE_DELTA, CUSTOM, APPROVAL_RESOLVED, REASONING_STARTED, REASONING_DELTA, REASONING_COMPLETED -> {
            }
            case USAGE -> {
                Event.Usage used = (Event.Usage) event;
                inputTokens += used.inputTokens();
                outputTokens += used.outputTokens();
                reportsUsage = true;
            }
            case MESSAGE_STARTED -> {
                Event.MessageStarted begun = (Event.MessageStarted) event;
                openMessage(begun.messageId(), role(begun.role()), out);
            }
            case TEXT_DELTA -> {
                Event.TextDelta delta = (Event.TextDelta) event;
                OpenMessage message = openMessage(delta.messageId(), "assistant", out);
                message.text.append(delta.delta());
                if (streaming) {
                    AgentScopeEvents.writeTextDelta(out, nextSequence++, deltaMessageId.of(message.id), delta.delta());
                }
            }
            case MESSAGE_COMPLETED -> {
                Event.MessageCompleted completed = (Event.MessageCompleted) event;
                OpenMessage message = openMessage(completed.messageId(), "assistant", out);
                completeText(message, completed.text(), AgentScopeEvents.citations(completed.citations()), out);
            }
            case TOOL_CALL_COMPLETED -> {
                Event.ToolCallCompleted call = (Event.ToolCallCompleted) event;
                wholeMessage(Ids.next("msg"), AgentScopeEvents.FUNCTION_CALL, "assistant",
                        AgentScopeEvents.functionCall(call.toolCallId(), call.toolName(), call.arguments()), out);
            }
            case TOOL_RESULT -> {
                Event.ToolResult result = (Event.ToolResult) event;
                wholeMessage(result.messageId(), AgentScopeEvents.FUNCTION_CALL_OUTPUT, "tool",
                        AgentScopeEvents.functionCallOutput(result.toolCallId(), result.toolName(), result.content()),
                        out);
            }
            case APPROVAL_REQUESTED -> {
                Event.ApprovalRequested approval = (Event.ApprovalRequested) event;
                closeOpen(out);
                // As in the OpenAI Responses API, the request's item id is the id its response names.
                wholeMessage(approval.approvalId(), AgentScopeEvents.MCP_APPROVAL_REQUEST, "assistant",
                        AgentScopeEvents.approvalRequest(approval.approvalId(), approval.toolName(),
                                approval.arguments(), SERVER_LABEL), out);
                finish(COMPLETED, null, ts, out);
            }
            case RUN_FINISHED -> {
                closeOpen(out);
                finish(COMPLETED, null, ts, out);
            }
            case RUN_FAILED -> {
                Event.RunFailed failed = (Event.RunFailed) event;
                finish(failed.code() == ErrorCode.CANCELLED ? AgentScopeEvents.CANCELED : AgentScopeEvents.FAILED,
                        AgentScopeEvents.error(failed.code(), failed.message()), ts, out);
            }
        }
    }

    /**
     * A decision's response shows the run that reports one of its approvals resolved: until then the
     * session's live events may belong to another run.
     */
    private boolean continuesTheDecidedRun(Event event) {
        return decidedApprovals.isEmpty()
                || event instanceof Event.ApprovalResolved resolved && decidedApprovals.contains(resolved.approvalId());
    }

    /**
     * Writes {@code response} created and in progress, whatever the first event is: a continued
     * run's first core event is the decision, not a start.
     */
    private void start(Envelope envelope, FrameWriter out) throws IOException {
        started = true;
        if (sessionId == null) {
            sessionId = envelope.conversationId();
        }
        responseId = Ids.next("response");
        createdAt = seconds(envelope.timestamp());
        emit(out, response(AgentScopeEvents.CREATED, null, null));
        emit(out, response(AgentScopeEvents.IN_PROGRESS, null, null));
    }

    private OpenMessage openMessage(String messageId, String role, FrameWriter out) throws IOException {
        OpenMessage open = openMessages.get(messageId);
        if (open == null) {
            open = new OpenMessage(messageId, role);
            openMessages.put(messageId, open);
            emit(out, AgentScopeEvents.message(messageId, AgentScopeEvents.MESSAGE, role, AgentScopeEvents.CREATED,
                    null, null));
        }
        return open;
    }

    /** Completes a text message: its whole text as completed content (when it has any), then the message. */
    private void completeText(OpenMessage message, String text, ObjectNode metadata, FrameWriter out)
            throws IOException {
        openMessages.remove(message.id);
        ArrayNode content = JsonNodeFactory.instance.arrayNode();
        if (!text.isEmpty()) {
            ObjectNode part = AgentScopeEvents.text(message.id, 0, false, COMPLETED, text);
            content.add(part.deepCopy());
            emit(out, part);
        }
        completeMessage(AgentScopeEvents.message(message.id, AgentScopeEvents.MESSAGE, message.role, COMPLETED,
                content, metadata), out);
    }

    /** A message with one data part, sent whole: created, its content, completed. */
    private void wholeMessage(String id, String type, String role, ObjectNode data, FrameWriter out)
            throws IOException {
        emit(out, AgentScopeEvents.message(id, type, role, AgentScopeEvents.CREATED, null, null));
        ObjectNode part = AgentScopeEvents.data(id, 0, data);
        ArrayNode content = JsonNodeFactory.instance.arrayNode();
        content.add(part.deepCopy());
        emit(out, part);
        completeMessage(AgentScopeEvents.message(id, type, role, COMPLETED, content, null), out);
    }

    private void completeMessage(ObjectNode message, FrameWriter out) throws IOException {
        emit(out, message);
        output.add(message);
    }

    /** Completes the text messages still open with the text streamed so far, before the response ends. */
    private void closeOpen(FrameWriter out) throws IOException {
        for (OpenMessage message : new ArrayList<>(openMessages.values())) {
            completeText(message, message.text.toString(), null, out);
        }
    }

    /** Writes the final {@code response}, in both modes, and ends the exchange. */
    private void finish(String status, ObjectNode error, long timestamp, FrameWriter out) throws IOException {
        ObjectNode response = response(status, seconds(timestamp), error);
        response.set("output", output);
        if (reportsUsage) {
            response.set("usage", AgentScopeEvents.usage(inputTokens, outputTokens));
        }
        response.put(AgentScopeEvents.SEQUENCE_NUMBER, nextSequence++);
        AgentScopeEvents.write(out, response);
        done = true;
    }

    private ObjectNode response(String status, Long completedAt, ObjectNode error) {
        return AgentScopeEvents.response(responseId, status, sessionId, createdAt, completedAt, null, error);
    }

    /** Sends an event of the stream; a response that does not stream keeps only the final one. */
    private void emit(FrameWriter out, ObjectNode event) throws IOException {
        if (streaming) {
            event.put(AgentScopeEvents.SEQUENCE_NUMBER, nextSequence++);
            AgentScopeEvents.write(out, event);
        }
    }

    /**
     * Before any frame, the error is the whole body (sent with its HTTP status); once the stream has
     * begun it is the final {@code response}, failed.
     */
    @Override
    public void encodeError(GatewayError error, FrameWriter out) throws IOException {
        if (done) {
            return;
        }
        if (streaming && started) {
            finish(AgentScopeEvents.FAILED, AgentScopeEvents.error(error.code(), error.message()), clock.getAsLong(),
                    out);
        } else {
            AgentScopeEvents.errorBody(out, error);
            done = true;
        }
    }

    /** The reference writes {@code created_at} and {@code completed_at} in whole epoch seconds. */
    private static long seconds(long epochMillis) {
        return epochMillis / 1000;
    }

    /** AgentScope's roles are user, assistant, system and tool. */
    private static String role(Role role) {
        return role == Role.DEVELOPER ? "system" : role.wireName();
    }
}
