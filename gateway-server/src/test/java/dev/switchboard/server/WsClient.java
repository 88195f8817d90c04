package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** A real WebSocket client (the JDK's) that collects every text message as JSON. */
final class WsClient implements WebSocket.Listener, AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(10);
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private final BlockingQueue<JsonNode> frames = new LinkedBlockingQueue<>();
    private final StringBuilder partial = new StringBuilder();
    final CompletableFuture<Integer> closeCode = new CompletableFuture<>();
    private WebSocket ws;

    static WsClient connect(int port, String pathAndQuery, String... subprotocols) {
        WsClient c = new WsClient();
        WebSocket.Builder b = HTTP.newWebSocketBuilder().connectTimeout(WAIT);
        if (subprotocols.length > 0) {
            b.subprotocols(subprotocols[0], java.util.Arrays.copyOfRange(subprotocols, 1, subprotocols.length));
        }
        c.ws = b.buildAsync(URI.create("ws://127.0.0.1:" + port + pathAndQuery), c).join();
        return c;
    }

    String subprotocol() {
        return ws.getSubprotocol();
    }

    WsClient send(String text) {
        ws.sendText(text, true).join();
        return this;
    }

    WsClient sendBinary(byte[] bytes) {
        ws.sendBinary(ByteBuffer.wrap(bytes), true).join();
        return this;
    }

    /** Sends a user_message. */
    WsClient ask(String session, String content) {
        return send(Json.object().put("type", "user_message").put("content", content)
                .put("session_id", session).toString());
    }

    JsonNode next() {
        try {
            JsonNode n = frames.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            if (n == null) {
                throw new AssertionError("no frame within " + WAIT);
            }
            return n;
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** Frames up to and including the first that matches. */
    List<JsonNode> until(Predicate<JsonNode> last) {
        List<JsonNode> out = new ArrayList<>();
        while (true) {
            JsonNode n;
            try {
                n = frames.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            if (n == null) {
                throw new AssertionError("no matching frame within " + WAIT + "; got " + out);
            }
            out.add(n);
            if (last.test(n)) {
                return out;
            }
        }
    }

    /** Frames of one HAI run, up to its {@code status: completed}. */
    List<JsonNode> untilCompleted() {
        return until(n -> n.path("type").asText().equals("status") && n.path("status").asText().equals("completed"));
    }

    /** Frames that arrive within a short quiet period. */
    List<JsonNode> drain(Duration quiet) {
        List<JsonNode> out = new ArrayList<>();
        try {
            JsonNode n;
            while ((n = frames.poll(quiet.toMillis(), TimeUnit.MILLISECONDS)) != null) {
                out.add(n);
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        return out;
    }

    int awaitClose() {
        try {
            return closeCode.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw new AssertionError("connection did not close within " + WAIT, e);
        }
    }

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
        partial.append(data);
        if (last) {
            try {
                frames.add(Json.MAPPER.readTree(partial.toString()));
            } catch (IOException e) {
                throw new UncheckedIOException("server sent a frame that is not JSON: " + partial, e);
            }
            partial.setLength(0);
        }
        webSocket.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
        closeCode.complete(statusCode);
        return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
        closeCode.complete(-1);
    }

    @Override
    public void close() {
        if (!ws.isOutputClosed()) {
            ws.sendClose(WebSocket.NORMAL_CLOSURE, "bye");
        }
        ws.abort();
    }
}
