package dev.switchboard.bench;

import dev.switchboard.core.Json;
import dev.switchboard.core.Principal;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.spi.WireAdapter;
import dev.switchboard.core.spi.WireAdapterProvider;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * The wire dialects the suite measures, each with its transport, its path, how a client asks the
 * demo agent for {@code benchmark <n>}, how it sees a run end, and how its sessions are made (from
 * the adapter's own provider, as the gateway makes them).
 */
public enum Dialect {
    HAI_WS("hai-ws", "hai", true, "/hai/ws", false),
    AGUI_WS("agui-ws", "agui", true, "/agui/ws", true),
    AGUI_SSE("agui-sse", "agui", false, "/agui", true),
    VOICEASSIST_WS("voiceassist-ws", "voiceassist", true, "/api/realtime/ws", false),
    AGENTSCOPE_SSE("agentscope-sse", "agentscope", false, "/process", false);

    /** The name used on the command line and in the report. */
    public final String id;
    /** The adapter's id, which is its provider's id. */
    public final String adapterId;
    public final boolean webSocket;
    public final String path;
    /**
     * Whether every frame carries its emission time in integer milliseconds (AG-UI's
     * {@code timestamp}); the others' latency is measured from the request instead.
     */
    public final boolean stampsMillis;

    Dialect(String id, String adapterId, boolean webSocket, String path, boolean stampsMillis) {
        this.id = id;
        this.adapterId = adapterId;
        this.webSocket = webSocket;
        this.path = path;
        this.stampsMillis = stampsMillis;
    }

    public static Dialect of(String id) {
        for (Dialect d : values()) {
            if (d.id.equals(id.toLowerCase(Locale.ROOT))) {
                return d;
            }
        }
        throw new IllegalArgumentException("unknown dialect " + id + "; one of hai-ws, agui-ws, agui-sse, "
                + "voiceassist-ws, agentscope-sse");
    }

    /** The adapter, created by its provider as the gateway creates it. */
    public WireAdapter adapter() {
        for (WireAdapterProvider p : ServiceLoader.load(WireAdapterProvider.class)) {
            if (p.id().equals(adapterId)) {
                return p.create(AdapterContext.defaults());
            }
        }
        throw new IllegalStateException("no adapter " + adapterId + " on the class path");
    }

    /** A new session (WebSocket) or exchange (SSE) of a connection in this conversation. */
    public DialectSession newSession(WireAdapter adapter, String conversationId) {
        SessionContext ctx = new SessionContext("conn_bench", Principal.ANONYMOUS, path,
                this == VOICEASSIST_WS ? Map.of("conversationId", List.of(conversationId)) : Map.of());
        return webSocket ? adapter.newSession(ctx) : adapter.newExchange(ctx);
    }

    /** What an SSE event is framed with on the wire; empty for WebSocket frames. */
    public byte[] framePrefix() {
        return webSocket ? new byte[0] : "data: ".getBytes(StandardCharsets.US_ASCII);
    }

    public byte[] frameSuffix() {
        return webSocket ? new byte[0] : "\n\n".getBytes(StandardCharsets.US_ASCII);
    }

    /** The WebSocket path and query of a client of this conversation. */
    public String webSocketUri(String conversationId) {
        return this == VOICEASSIST_WS ? path + "?conversationId=" + conversationId : path;
    }

    /** The frame (WebSocket) or body (SSE) that asks the demo agent for {@code text}. */
    public String request(String conversationId, String runId, String messageId, String text) {
        return switch (this) {
            case HAI_WS -> Json.object().put("type", "user_message").put("content", text)
                    .put("session_id", conversationId).toString();
            case AGUI_WS, AGUI_SSE -> {
                var input = Json.object().put("threadId", conversationId).put("runId", runId);
                input.putArray("messages").addObject().put("id", messageId).put("role", "user").put("content", text);
                if (this == AGUI_SSE) {
                    input.putArray("tools");
                    input.putArray("context");
                    input.putObject("forwardedProps");
                }
                yield input.toString();
            }
            case VOICEASSIST_WS -> Json.object().put("type", "message").put("content", text).toString();
            case AGENTSCOPE_SSE -> {
                var req = Json.object().put("session_id", conversationId).put("stream", true);
                req.putArray("input").addObject().put("role", "user").put("type", "message")
                        .putArray("content").addObject().put("type", "text").put("text", text);
                yield req.toString();
            }
        };
    }

    /**
     * The marker of a WebSocket run's last frame: HAI's {@code status: completed}, AG-UI's
     * {@code RUN_FINISHED}, VoiceAssist's {@code message_complete} (it has nothing for the run's
     * end). An SSE run ends with its response.
     */
    public byte[] lastFrameMarker() {
        String marker = switch (this) {
            case HAI_WS -> "\"status\":\"completed\"";
            case AGUI_WS -> "\"type\":\"RUN_FINISHED\"";
            case VOICEASSIST_WS -> "\"type\":\"message_complete\"";
            case AGUI_SSE, AGENTSCOPE_SSE -> null;
        };
        return marker == null ? null : marker.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * The marker of an error frame: one that means the conversation still had a run (VoiceAssist
     * answers before its run has quite ended), and is retried.
     */
    public byte[] errorMarker() {
        String marker = switch (this) {
            case HAI_WS -> "\"type\":\"error\"";
            case AGUI_WS -> "\"name\":\"agora:error\"";
            case VOICEASSIST_WS -> "\"type\":\"error\"";
            case AGUI_SSE, AGENTSCOPE_SSE -> null;
        };
        return marker == null ? null : marker.getBytes(StandardCharsets.US_ASCII);
    }
}
