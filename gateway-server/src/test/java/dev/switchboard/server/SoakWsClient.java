package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A soak client of a WebSocket dialect (HAI, AG-UI, VoiceAssist) on the JDK's WebSocket. It asks
 * for each frame only when it has handled the last one, so a slow reader is slow on the wire too.
 */
final class SoakWsClient extends SoakClient {
    private static final HttpClient[] HTTP = new HttpClient[4];

    static {
        for (int i = 0; i < HTTP.length; i++) {
            HTTP[i] = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        }
    }

    /** A closed or failed connection, as its inbox shows it. */
    private record Closed(String how, Loss loss) {
    }

    private Connection connection;

    SoakWsClient(int index, SoakDialect dialect, String conversation, boolean slow, SoakPlan plan) {
        super(index, dialect, conversation, slow, plan);
    }

    @Override
    void open() throws InterruptedException {
        connect();
    }

    private void connect() throws InterruptedException {
        connect(() -> {
            Connection c = new Connection();
            c.ws = HTTP[index % HTTP.length].newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5))
                    .buildAsync(URI.create("ws://127.0.0.1:" + port + dialect.wsPath(conversation, cursor)), c)
                    .get(10, TimeUnit.SECONDS);
            connection = c;
        });
    }

    private boolean send(String text) throws InterruptedException {
        try {
            connection.ws.sendText(text, true).get(10, TimeUnit.SECONDS);
            trace("sent " + text.substring(0, Math.min(40, text.length())));
            return true;
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            trace("send failed: " + e);
            return false;
        }
    }

    /** Sends the run's request; if the connection is gone, resumes and sends again. */
    private void ask() throws InterruptedException {
        String request = dialect.runRequest(conversation, prompt);
        while (!send(request)) {
            lost("the request could not be sent", Loss.ERROR);
            connection.abort();
            connect();
        }
    }

    @Override
    void run(int dropAt) throws Exception {
        ask();
        int events = 0;
        // Lost with the connection before any event of the run: the request may be lost too.
        boolean unsure = false;
        while (true) {
            Object item = connection.take(unsure || resynced ? Duration.ofSeconds(3) : plan.frameWait);
            if (item == null && (unsure || resynced)) {
                // Nothing more after a resync: the request went with the events the kill lost; ask again.
                plan.resentRequests.incrementAndGet();
                unsure = false;
                resynced = false;
                ask();
                continue;
            }
            if (item == null) {
                stuck = true;
                fail("no frame for " + plan.frameWait.toSeconds() + " s in " + state + " after seq " + cursor + "; "
                        + traced());
                throw new IllegalStateException("stuck");
            }
            if (item instanceof Closed closed) {
                trace("lost: " + closed.how);
                lost(closed.how, closed.loss);
                connect();
                unsure = events == 0;
                continue;
            }
            JsonNode frame = (JsonNode) item;
            long seq = dialect.seq(frame);
            if (seq < 0) {
                String shown = frame.toString();
                trace("frame " + shown.substring(0, Math.min(120, shown.length())));
                if (retryAfter(frame)) {
                    ask();
                }
                continue;
            }
            record(seq, frame);
            trace(seq + " " + frame.path("type").asText());
            unsure = false;
            if (dialect.endsRun(frame, prompt)) {
                resynced = false;
                return;
            }
            if (dialect.answerMayBeAnothers(frame, prompt)) {
                // Its own crash run's error follows at once; if nothing does, the answer was another
                // run's and the request was refused as busy on a connection since dropped: ask again.
                unsure = true;
            }
            if (++events == dropAt) {
                plan.plannedDisconnects.incrementAndGet();
                connection.abort();
                pause(800);
                connect();
            }
        }
    }

    @Override
    void malformed(String input) throws Exception {
        plan.malformedSent.incrementAndGet();
        if (!send(input)) {
            lost("a malformed frame could not be sent", Loss.ERROR);
            connection.abort();
            connect();
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            Object item = connection.take(Duration.ofSeconds(10));
            if (item instanceof Closed closed) {
                lost(closed.how, closed.loss);
                connect();
                return;
            }
            JsonNode frame = (JsonNode) item;
            if (frame == null) {
                break;
            }
            long seq = dialect.seq(frame);
            if (seq >= 0) {
                record(seq, frame);
            } else if (dialect.isConnectionError(frame) && !isBusy(frame)) {
                plan.provokedErrors.incrementAndGet();
                return;
            } else if (dialect.isConnectionError(frame) && outlivedKill) {
                // The late refusal of the request before: after the kill, a run continued from an
                // approval may have answered in its place (the client cannot tell the two apart).
                plan.busyRetries.incrementAndGet();
            } else if (dialect.isConnectionError(frame)) {
                fail("after the malformed frame " + input + " came " + frame);
                return;
            }
        }
        fail("no error for the malformed frame " + input);
    }

    @Override
    void close() {
        if (connection != null) {
            connection.abort();
        }
    }

    /** One WebSocket and the frames it received, as JSON, or its end. */
    private final class Connection implements WebSocket.Listener {
        private final BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
        private final StringBuilder partial = new StringBuilder();
        WebSocket ws;

        /**
         * The next frame (asking for the one after it), its end, or null after {@code wait}. Every two
         * quiet seconds it pings: the JDK client can miss the end of a connection whose peer died
         * while it was reading slowly (no onClose, no onError), and only a failed write shows it.
         */
        Object take(Duration wait) throws InterruptedException {
            long deadline = System.nanoTime() + wait.toNanos();
            Object item;
            while ((item = inbox.poll(Math.min(2_000, wait.toMillis()), TimeUnit.MILLISECONDS)) == null) {
                if (System.nanoTime() > deadline) {
                    return null;
                }
                try {
                    ws.sendPing(java.nio.ByteBuffer.allocate(0)).get(5, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                    return new Closed("a ping failed: " + e.getCause(), Loss.UNEXPLAINED);
                }
            }
            if (item instanceof JsonNode) {
                readSlowly();
                ws.request(1);
            }
            return item;
        }

        void abort() {
            if (ws != null) {
                ws.abort();
            }
        }

        @Override
        public void onOpen(WebSocket webSocket) {
            webSocket.request(1);
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            plan.bytesReceived.addAndGet(data.length());
            partial.append(data);
            if (!last) {
                webSocket.request(1);
                return null;
            }
            try {
                inbox.add(Json.MAPPER.readTree(partial.toString()));
            } catch (IOException e) {
                fail("a frame that is not JSON: " + partial);
                webSocket.request(1);
            }
            partial.setLength(0);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket webSocket, java.nio.ByteBuffer data, boolean last) {
            fail("a binary frame from the gateway");
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            inbox.add(new Closed("close " + statusCode + " " + reason, statusCode == 1013 ? Loss.TOO_SLOW : Loss.ERROR));
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            // A slow reader cut off before its close frame could be sent sees the connection reset.
            inbox.add(new Closed("error " + error, Loss.UNEXPLAINED));
        }
    }
}
