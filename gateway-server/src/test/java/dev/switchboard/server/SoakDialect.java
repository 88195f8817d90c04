package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Event.Kind;
import dev.switchboard.core.Json;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import static dev.switchboard.core.Event.Kind.APPROVAL_REQUESTED;
import static dev.switchboard.core.Event.Kind.MESSAGE_COMPLETED;
import static dev.switchboard.core.Event.Kind.MESSAGE_STARTED;
import static dev.switchboard.core.Event.Kind.RUN_FAILED;
import static dev.switchboard.core.Event.Kind.RUN_FINISHED;
import static dev.switchboard.core.Event.Kind.RUN_STARTED;
import static dev.switchboard.core.Event.Kind.STEP_FINISHED;
import static dev.switchboard.core.Event.Kind.STEP_STARTED;
import static dev.switchboard.core.Event.Kind.TEXT_DELTA;
import static dev.switchboard.core.Event.Kind.TOOL_CALL_ARGS;
import static dev.switchboard.core.Event.Kind.TOOL_CALL_COMPLETED;
import static dev.switchboard.core.Event.Kind.TOOL_CALL_STARTED;
import static dev.switchboard.core.Event.Kind.TOOL_RESULT;

/**
 * What the chaos soak knows of each dialect's wire: how a client of it starts a run, finds the
 * resume cursor on a frame, sees a run end, and which stored events it must be shown (a dialect
 * with no message for an event kind shows nothing for it; see design/mapping.md).
 */
enum SoakDialect {
    HAI(true, EnumSet.of(RUN_STARTED, TEXT_DELTA, MESSAGE_COMPLETED, TOOL_CALL_COMPLETED, TOOL_RESULT,
            APPROVAL_REQUESTED, RUN_FINISHED, RUN_FAILED)),
    AGUI_WS(true, EnumSet.of(RUN_STARTED, STEP_STARTED, STEP_FINISHED, MESSAGE_STARTED, TEXT_DELTA, MESSAGE_COMPLETED,
            TOOL_CALL_STARTED, TOOL_CALL_ARGS, TOOL_CALL_COMPLETED, TOOL_RESULT, APPROVAL_REQUESTED, RUN_FINISHED,
            RUN_FAILED)),
    VOICE(true, EnumSet.of(MESSAGE_STARTED, TEXT_DELTA, MESSAGE_COMPLETED, RUN_FAILED)),
    // Every AG-UI SSE response reads as a stream of its own: it closes only the steps it opened, and
    // the arguments of a call it did not see start come whole with the call's end.
    AGUI_SSE(false, EnumSet.of(RUN_STARTED, STEP_STARTED, MESSAGE_STARTED, TEXT_DELTA, MESSAGE_COMPLETED,
            TOOL_CALL_STARTED, TOOL_CALL_COMPLETED, TOOL_RESULT, RUN_FINISHED, RUN_FAILED)),
    AGENTSCOPE(false, EnumSet.of(RUN_STARTED, MESSAGE_STARTED, TEXT_DELTA, MESSAGE_COMPLETED, TOOL_CALL_COMPLETED,
            TOOL_RESULT, RUN_FINISHED, RUN_FAILED));

    final boolean webSocket;
    /** Stored event kinds a client of this dialect is always shown, so a missing one is a gap. */
    final Set<Kind> shown;

    SoakDialect(boolean webSocket, Set<Kind> shown) {
        this.webSocket = webSocket;
        this.shown = shown;
    }

    /** Approvals need a connection that stays for the decision: the SSE dialects end their stream there. */
    boolean asksApprovals() {
        return webSocket;
    }

    // ---- WebSocket dialects --------------------------------------------------------------------

    /** The URL path of a connection to conversation {@code id}: a live join, or a resume after {@code cursor}. */
    String wsPath(String id, long cursor) {
        String base = switch (this) {
            case HAI -> "/hai/ws?session_id=";
            case AGUI_WS -> "/agui/ws?threadId=";
            case VOICE -> "/api/realtime/ws?conversationId=";
            default -> throw new IllegalStateException(this + " is not a WebSocket dialect");
        };
        return base + id + (cursor > 0 ? "&last_seq=" + cursor : "");
    }

    /** The frame (WebSocket) or request body (SSE) that asks for a run. */
    String runRequest(String id, String prompt) {
        return switch (this) {
            case HAI -> Json.object().put("type", "user_message").put("content", prompt).put("session_id", id).toString();
            case VOICE -> Json.object().put("type", "message").put("content", prompt).toString();
            case AGUI_WS, AGUI_SSE -> {
                ObjectNode in = Json.object().put("threadId", id).put("runId", UUID.randomUUID().toString());
                in.putArray("messages").addObject().put("id", UUID.randomUUID().toString()).put("role", "user")
                        .put("content", prompt);
                yield in.toString();
            }
            case AGENTSCOPE -> {
                ObjectNode req = Json.object().put("session_id", id);
                req.putArray("input").addObject().put("role", "user").put("content", prompt);
                yield req.toString();
            }
        };
    }

    /** The resume cursor a WebSocket frame carries, or -1 for a frame that is no stored event. */
    long seq(JsonNode frame) {
        JsonNode seq = this == AGUI_WS ? frame.path("metadata").path("seq") : frame.path("seq");
        return seq.isIntegralNumber() ? seq.asLong() : -1;
    }

    /**
     * An error answered to this connection alone: what a malformed frame must get. (Frames
     * without a cursor are otherwise the leading frames of an event whose last frame has it,
     * such as HAI's error before the status that ends a failed run, which names the run.)
     */
    boolean isConnectionError(JsonNode frame) {
        String type = frame.path("type").asText();
        return switch (this) {
            case HAI -> type.equals("error") && (!frame.path("details").has("run_id") || SoakClient.isBusy(frame));
            case VOICE -> type.equals("error") && !frame.has("seq");
            case AGUI_WS -> type.equals("CUSTOM") && frame.path("name").asText().equals("agora:error");
            default -> false;
        };
    }

    /** The text of a frame that carries one text delta, else null. */
    String deltaText(JsonNode frame) {
        return switch (this) {
            case HAI -> frame.path("type").asText().equals("assistant_message_chunk")
                    && !frame.path("is_final").asBoolean() ? frame.path("content").asText() : null;
            case VOICE -> frame.path("type").asText().equals("message_chunk") ? frame.path("content").asText() : null;
            case AGUI_WS, AGUI_SSE -> frame.path("type").asText().equals("TEXT_MESSAGE_CONTENT")
                    ? frame.path("delta").asText() : null;
            case AGENTSCOPE -> frame.path("object").asText().equals("content") && frame.path("delta").asBoolean()
                    && frame.path("type").asText().equals("text") ? frame.path("text").asText() : null;
        };
    }

    /** The frame that shows a run ended (its failure included), for a run asked with {@code prompt}. */
    boolean endsRun(JsonNode frame, String prompt) {
        String type = frame.path("type").asText();
        return switch (this) {
            case HAI -> type.equals("status") && frame.path("status").asText().equals("completed");
            case AGUI_WS -> type.equals("RUN_FINISHED");
            case AGUI_SSE -> type.equals("RUN_FINISHED") || type.equals("RUN_ERROR");
            // VoiceAssist shows no run end: the answer's message_complete, or the error of a failed run.
            case VOICE -> type.equals("error") || type.equals("message_complete") && !prompt.contains("crash");
            case AGENTSCOPE -> frame.path("object").asText().equals("response")
                    && List.of("completed", "failed", "canceled").contains(frame.path("status").asText());
        };
    }

    /**
     * Whether a frame that does not end the run asked with {@code prompt} may be the end of another
     * run's answer. VoiceAssist shows no run boundaries, so the {@code message_complete} a client
     * waiting for its {@code crash} run's error gets is either its own run's (the error follows) or
     * the end of the run that was active when it asked; then its request was refused as busy, and
     * the refusal is lost if the client dropped that connection before it came.
     */
    boolean answerMayBeAnothers(JsonNode frame, String prompt) {
        return this == VOICE && prompt.contains("crash") && frame.path("type").asText().equals("message_complete");
    }

    /** Inputs that are not valid requests of this dialect; each must get a clear error, and nothing else. */
    List<String> malformed() {
        return switch (this) {
            case HAI -> List.of("{\"type\":\"user_message\"", "{\"type\":\"launch_missiles\"}", "[1,2,3]",
                    "{\"type\":\"user_message\",\"content\":42,\"session_id\":\"x\"}");
            case AGUI_WS -> List.of("{\"threadId\":", "{\"threadId\":5,\"messages\":[]}", "\"a string\"",
                    "{\"threadId\":\"t\",\"messages\":{}}");
            case VOICE -> List.of("{\"type\":\"message\"}", "{oops", "{\"type\":\"teleport\"}", "null");
            case AGUI_SSE -> List.of("{\"threadId\":", "{\"threadId\":5,\"messages\":[]}", "[]");
            case AGENTSCOPE -> List.of("{\"session_id\":", "{\"input\":42}", "{\"input\":[{\"role\":7}]}");
        };
    }

    /** The POST path that starts a run, and the GET path that reattaches to a conversation's run. */
    String postPath() {
        return this == AGUI_SSE ? "/agui" : "/process";
    }

    String reattachPath(String id) {
        return this == AGUI_SSE ? "/agui/threads/" + id + "/events" : "/process/sessions/" + id + "/events";
    }
}
