package dev.switchboard.bench;

import dev.switchboard.core.Ids;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SynchronizedHistogram;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The clients of the LLM phase: connections that each ask for answers one after another and time
 * every token of them, reading the scripted model directly ({@code POST /v1/chat/completions}) or
 * through the gateway (HAI over WebSocket, AG-UI over {@code POST /agui}). Time to first token is
 * from the request to the first content token's arrival; per-token latency from the time the model
 * wrote a token (which its text carries, see {@link ScriptedModel}) to its arrival. All on the
 * JDK's HTTP client, in this process, whose clock the model's is. Every answer is asked for in a
 * new conversation, so that the model is asked the same as the direct path asks it: one user
 * message, no history.
 */
final class LlmClient {
    /** Where a client reads the model's answers. */
    enum Path {
        DIRECT("direct"),
        HAI_WS("hai-ws"),
        AGUI_SSE("agui-sse");

        final String id;

        Path(String id) {
            this.id = id;
        }
    }

    /** What one point delivered; latencies in nanoseconds. */
    record Result(Path path, int clients, int answersPerClient, int tokens, double tokensPerSecond, long answers,
                  long tokensReceived, long errors, boolean timedOut, double seconds, Histogram ttft,
                  Histogram perToken) {
    }

    private static final String PROMPT = "Hello";
    private static final String DIRECT_BODY = "{\"model\":\"" + ScriptedModel.MODEL + "\",\"stream\":true,"
            + "\"stream_options\":{\"include_usage\":true},\"messages\":[{\"role\":\"user\",\"content\":\"" + PROMPT
            + "\"}]}";
    private static final long MAX_NANOS = TimeUnit.MINUTES.toNanos(10);

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(30)).build();

    /**
     * {@code clients} connections on {@code path} (the model's port for direct, else the gateway's),
     * each asking for {@code answersPerClient} answers back to back, the first after a random delay
     * below {@code stagger}; stops at {@code limit} whatever is left.
     */
    Result run(Path path, int port, int clients, int answersPerClient, int tokens, double tokensPerSecond,
               Duration stagger, Duration limit) throws InterruptedException {
        Measurement m = new Measurement(tokens);
        List<Connection> connections = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            connections.add(switch (path) {
                case DIRECT -> new Direct(m, port);
                case HAI_WS -> new Hai(m, port);
                case AGUI_SSE -> new AguiSse(m, port);
            });
        }
        List<CompletableFuture<Void>> opened = new ArrayList<>();
        for (Connection c : connections) {
            opened.add(c.open());
        }
        try {
            CompletableFuture.allOf(opened.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("the " + path.id + " clients did not connect: " + e.getMessage(), e);
        }
        long start = System.nanoTime();
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (Connection c : connections) {
            long delay = stagger.isZero() ? 0 : ThreadLocalRandom.current().nextLong(stagger.toNanos());
            Executor after = CompletableFuture.delayedExecutor(delay, TimeUnit.NANOSECONDS);
            done.add(CompletableFuture.supplyAsync(() -> null, after)
                    .thenCompose(v -> answers(c, m, answersPerClient)));
        }
        boolean timedOut = false;
        try {
            CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0]))
                    .get(limit.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            timedOut = true;
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
        m.stopped = true;
        double seconds = (System.nanoTime() - start) / 1e9;
        for (Connection c : connections) {
            c.close();
        }
        return new Result(path, clients, answersPerClient, tokens, tokensPerSecond, m.answers.get(),
                m.tokensReceived.get(), m.errors.get(), timedOut, seconds, m.ttft.copy(), m.perToken.copy());
    }

    private CompletableFuture<Void> answers(Connection c, Measurement m, int left) {
        if (left == 0 || m.stopped) {
            return CompletableFuture.completedFuture(null);
        }
        Answer a = new Answer(m);
        c.current = a;
        a.sentAt = ScriptedModel.now();
        c.ask(a);
        return a.done.handle((v, e) -> {
            a.end(e == null);
            return null;
        }).thenCompose(v -> answers(c, m, left - 1));
    }

    /** Counters and histograms shared by the connections of one point. */
    private static final class Measurement {
        final int tokens;
        final AtomicLong answers = new AtomicLong();
        final AtomicLong tokensReceived = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
        final Histogram ttft = new SynchronizedHistogram(MAX_NANOS, 3);
        final Histogram perToken = new SynchronizedHistogram(MAX_NANOS, 3);
        volatile boolean stopped;

        Measurement(int tokens) {
            this.tokens = tokens;
        }
    }

    /** One answer being read: when it was asked for and how many of its tokens have come. */
    private static final class Answer {
        final Measurement m;
        final CompletableFuture<Void> done = new CompletableFuture<>();
        long sentAt;
        int tokens;
        volatile boolean failed;

        Answer(Measurement m) {
            this.m = m;
        }

        /** Takes one frame or line; {@code at} is where a token's text would start in it. */
        void text(CharSequence frame, int at, long arrival) {
            long sent = at < 0 ? -1 : ScriptedModel.sentAt(frame, at);
            if (sent < 0) {
                return;
            }
            if (tokens == 0) {
                m.ttft.recordValue(Math.min(MAX_NANOS, Math.max(0, arrival - sentAt)));
            }
            tokens++;
            m.perToken.recordValue(Math.min(MAX_NANOS, Math.max(0, arrival - sent)));
        }

        void end(boolean ok) {
            m.tokensReceived.addAndGet(tokens);
            if (ok && !failed && tokens == m.tokens) {
                m.answers.incrementAndGet();
            } else {
                m.errors.incrementAndGet();
            }
        }
    }

    /** One client's connection, over which it asks for its answers one after another. */
    private abstract static class Connection {
        final Measurement m;
        final int port;
        volatile Answer current;

        Connection(Measurement m, int port) {
            this.m = m;
            this.port = port;
        }

        CompletableFuture<Void> open() {
            return CompletableFuture.completedFuture(null);
        }

        abstract void ask(Answer a);

        void close() {
        }
    }

    /** An HTTP request whose response is an event stream, read line by line as it arrives. */
    private abstract class SseConnection extends Connection {
        SseConnection(Measurement m, int port) {
            super(m, port);
        }

        void post(String path, String body, Answer a) {
            HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .header("Content-Type", "application/json")
                    .header("Accept", "text/event-stream")
                    .timeout(Duration.ofMinutes(2))
                    .POST(HttpRequest.BodyPublishers.ofString(body))
                    .build();
            http.sendAsync(req, HttpResponse.BodyHandlers.fromLineSubscriber(new Lines(a)))
                    .whenComplete((res, e) -> {
                        if (e != null || res.statusCode() != 200) {
                            a.failed = true;
                        }
                        a.done.complete(null);
                    });
        }

        /** Where a token's text starts in this line, or -1 when the line holds none. */
        abstract int token(String line);

        private final class Lines implements Flow.Subscriber<String> {
            private final Answer a;

            Lines(Answer a) {
                this.a = a;
            }

            @Override
            public void onSubscribe(Flow.Subscription s) {
                s.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(String line) {
                long arrival = ScriptedModel.now();
                if (line.startsWith("data:")) {
                    a.text(line, token(line), arrival);
                }
            }

            @Override
            public void onError(Throwable e) {
                a.failed = true;
            }

            @Override
            public void onComplete() {
            }
        }
    }

    /** A client of the model server itself. */
    private final class Direct extends SseConnection {
        Direct(Measurement m, int port) {
            super(m, port);
        }

        @Override
        void ask(Answer a) {
            post("/v1/chat/completions", DIRECT_BODY, a);
        }

        @Override
        int token(String line) {
            return after(line, 0, "\"content\":\"");
        }
    }

    /** An AG-UI client over HTTP and SSE: a RunAgentInput per answer. */
    private final class AguiSse extends SseConnection {
        AguiSse(Measurement m, int port) {
            super(m, port);
        }

        @Override
        void ask(Answer a) {
            post(Dialect.AGUI_SSE.path, Dialect.AGUI_SSE.request(UUID.randomUUID().toString(), Ids.next("run"),
                    Ids.next("msg"), PROMPT), a);
        }

        @Override
        int token(String line) {
            int type = line.indexOf("\"type\":\"TEXT_MESSAGE_CONTENT\"");
            return type < 0 ? -1 : after(line, type, "\"delta\":\"");
        }
    }

    /** A HAI client: one WebSocket, a {@code user_message} per answer. */
    private final class Hai extends Connection implements WebSocket.Listener {
        private final StringBuilder frame = new StringBuilder();
        private WebSocket ws;

        Hai(Measurement m, int port) {
            super(m, port);
        }

        @Override
        CompletableFuture<Void> open() {
            return http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(30))
                    .buildAsync(URI.create("ws://127.0.0.1:" + port + Dialect.HAI_WS.path), this)
                    .thenAccept(w -> ws = w);
        }

        @Override
        void ask(Answer a) {
            ws.sendText(Dialect.HAI_WS.request(UUID.randomUUID().toString(), null, null, PROMPT), true).exceptionally(e -> {
                a.failed = true;
                a.done.complete(null);
                return null;
            });
        }

        @Override
        public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
            long arrival = ScriptedModel.now();
            w.request(1);
            frame.append(data);
            if (!last) {
                return null;
            }
            Answer a = current;
            if (a != null && !a.done.isDone()) {
                int type = frame.indexOf("\"type\":\"assistant_message_chunk\"");
                if (type >= 0) {
                    a.text(frame, after(frame, type, "\"content\":\""), arrival);
                } else if (frame.indexOf("\"type\":\"error\"") >= 0) {
                    a.failed = true;
                } else if (frame.indexOf("\"status\":\"completed\"") >= 0) {
                    a.done.complete(null);
                }
            }
            frame.setLength(0);
            return null;
        }

        @Override
        public void onError(WebSocket w, Throwable error) {
            Answer a = current;
            if (a != null) {
                a.failed = true;
                a.done.complete(null);
            }
        }

        @Override
        void close() {
            if (ws != null) {
                ws.abort();
            }
        }
    }

    /** Where the text after {@code key} starts, searching from {@code from}; -1 when there is none. */
    private static int after(CharSequence s, int from, String key) {
        int at = s instanceof String str ? str.indexOf(key, from) : ((StringBuilder) s).indexOf(key, from);
        return at < 0 ? -1 : at + key.length();
    }
}
