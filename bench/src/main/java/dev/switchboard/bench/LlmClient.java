package dev.switchboard.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Ids;
import dev.switchboard.core.Json;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SynchronizedHistogram;

import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
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
 * message, no history; or, in a point of <em>follow-ups</em>, as the next turn of the client's one
 * conversation, after a first turn that is not counted: the direct client then sends the whole
 * conversation so far with each request, an AG-UI client sends it too (the assistant's messages
 * under the ids the gateway gave them), and a HAI client only its new message (the gateway keeps
 * the history).
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
                  Histogram perToken, boolean followUps, Histogram ttftAsk, Histogram ttftBring) {
    }

    private static final String PROMPT = "Hello";
    private static final String DIRECT_BODY = "{\"model\":\"" + ScriptedModel.MODEL + "\",\"stream\":true,"
            + "\"stream_options\":{\"include_usage\":true},\"messages\":[{\"role\":\"user\",\"content\":\"" + PROMPT
            + "\"}]}";
    private static final long MAX_NANOS = TimeUnit.MINUTES.toNanos(10);
    /** Failed answers of a point whose reason is logged. */
    private static final int FAILURES_LOGGED = 5;
    /** Lines of a streamed answer kept to show when it fails. */
    private static final int LINES_KEPT = 16;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(30)).build();

    /**
     * {@code clients} connections on {@code path} (the model's port for direct, else the gateway's),
     * each asking for {@code answersPerClient} answers back to back, the first after a random delay
     * below {@code stagger}; stops at {@code limit} whatever is left.
     */
    Result run(Path path, int port, int clients, int answersPerClient, int tokens, double tokensPerSecond,
               Duration stagger, Duration limit) throws InterruptedException {
        return run(path, port, clients, answersPerClient, tokens, tokensPerSecond, stagger, limit, false);
    }

    /**
     * As {@link #run(Path, int, int, int, int, double, Duration, Duration)}; with {@code followUps}
     * each client asks its answers as the turns after a first, uncounted one of one conversation.
     */
    Result run(Path path, int port, int clients, int answersPerClient, int tokens, double tokensPerSecond,
               Duration stagger, Duration limit, boolean followUps) throws InterruptedException {
        Measurement m = new Measurement(path, tokens);
        List<Connection> connections = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            Connection c = switch (path) {
                case DIRECT -> new Direct(m, port);
                case HAI_WS -> new Hai(m, port);
                case AGUI_SSE -> new AguiSse(m, port);
            };
            c.conversation = followUps ? new ArrayList<>() : null;
            connections.add(c);
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
                    .thenCompose(v -> answers(c, m, followUps ? answersPerClient + 1 : answersPerClient)));
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
                m.tokensReceived.get(), m.errors.get(), timedOut, seconds, m.ttft.copy(), m.perToken.copy(), followUps,
                m.ttftAsk.copy(), m.ttftBring.copy());
    }

    private CompletableFuture<Void> answers(Connection c, Measurement m, int left) {
        if (left == 0 || m.stopped) {
            return CompletableFuture.completedFuture(null);
        }
        List<Said> said = c.conversation;
        // Of a conversation's turns the first is not counted: it creates the conversation.
        Answer a = new Answer(m, said == null || !said.isEmpty(), said != null);
        c.current = a;
        a.sentAt = ScriptedModel.now();
        c.ask(a);
        return a.done.handle((v, e) -> {
            a.end(e == null);
            if (said != null) {
                said.add(new Said("user", a.userMessageId, PROMPT));
                said.add(new Said("assistant", a.messageId != null ? a.messageId : Ids.next("msg"), a.text.toString()));
            }
            return null;
        }).thenCompose(v -> answers(c, m, left - 1));
    }

    /** Counters and histograms shared by the connections of one point. */
    private static final class Measurement {
        final int tokens;
        final Path path;
        final AtomicLong answers = new AtomicLong();
        final AtomicLong tokensReceived = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
        final Histogram ttft = new SynchronizedHistogram(MAX_NANOS, 3);
        final Histogram perToken = new SynchronizedHistogram(MAX_NANOS, 3);
        /**
         * A first token's time in two legs, split where the model wrote it (its stamp): asking, from
         * the client's send to the model's write; bringing, from there to the client's read.
         */
        final Histogram ttftAsk = new SynchronizedHistogram(MAX_NANOS, 3);
        final Histogram ttftBring = new SynchronizedHistogram(MAX_NANOS, 3);
        volatile boolean stopped;

        Measurement(Path path, int tokens) {
            this.path = path;
            this.tokens = tokens;
        }
    }

    /** A message of a client's conversation, as a follow-up sends it back. */
    private record Said(String role, String id, String content) {
    }

    /** One answer being read: when it was asked for and how many of its tokens have come. */
    private static final class Answer {
        final Measurement m;
        final CompletableFuture<Void> done = new CompletableFuture<>();
        /** False for a conversation's first turn in a point of follow-ups: its times are not recorded. */
        final boolean counted;
        /** The answer's text, kept for the next turn (null when there is none). */
        final StringBuilder text;
        /** The id of the user message that asked for it, and of the answer's message where the path tells it. */
        final String userMessageId = Ids.next("msg");
        volatile String messageId;
        long sentAt;
        int tokens;
        volatile boolean failed;
        /** Why it failed, for the log: the first reason noted. */
        volatile String why;
        /** The first lines of its stream (of an SSE path), shown when it fails. */
        final List<String> lines = Collections.synchronizedList(new ArrayList<>(LINES_KEPT));

        Answer(Measurement m, boolean counted, boolean keepText) {
            this.m = m;
            this.counted = counted;
            this.text = keepText ? new StringBuilder() : null;
        }

        /** Takes one frame or line; {@code at} is where a token's text would start in it. */
        void text(CharSequence frame, int at, long arrival) {
            long sent = at < 0 ? -1 : ScriptedModel.sentAt(frame, at);
            if (sent < 0) {
                return;
            }
            if (text != null) {
                for (int i = at; i < frame.length() && frame.charAt(i) != '"'; i++) {
                    text.append(frame.charAt(i));
                }
            }
            if (counted && tokens == 0) {
                m.ttft.recordValue(Math.min(MAX_NANOS, Math.max(0, arrival - sentAt)));
                m.ttftAsk.recordValue(Math.min(MAX_NANOS, Math.max(0, sent - sentAt)));
                m.ttftBring.recordValue(Math.min(MAX_NANOS, Math.max(0, arrival - sent)));
            }
            tokens++;
            if (counted) {
                m.perToken.recordValue(Math.min(MAX_NANOS, Math.max(0, arrival - sent)));
            }
        }

        /** Marks it failed, noting why (the first reason stands). */
        void fail(String reason) {
            if (why == null) {
                why = reason;
            }
            failed = true;
        }

        /**
         * Counts the answer; its tokens count in any case, as the gateway's CPU time over the point
         * does. The first few failures of a point are logged with their reason.
         */
        void end(boolean ok) {
            m.tokensReceived.addAndGet(tokens);
            if (!ok || failed || tokens != m.tokens) {
                if (m.errors.incrementAndGet() <= FAILURES_LOGGED) {
                    System.err.printf("llm %s answer failed: %s; %d of %d tokens came%s%n", m.path.id,
                            why != null ? why : ok ? "its stream ended" : "it did not end", tokens, m.tokens,
                            lines.isEmpty() ? "" : "; its first lines " + lines);
                }
            } else if (counted) {
                m.answers.incrementAndGet();
            }
        }
    }

    /** One client's connection, over which it asks for its answers one after another. */
    private abstract static class Connection {
        final Measurement m;
        final int port;
        volatile Answer current;
        /** The conversation so far, in a point of follow-ups (else null); its answers are read one at a time. */
        List<Said> conversation;

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
                        if (e != null) {
                            a.fail("the request failed: " + e);
                        } else if (res.statusCode() != 200) {
                            a.fail("HTTP status " + res.statusCode());
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
                if (a.lines.size() < LINES_KEPT) {
                    a.lines.add(line);
                }
                if (line.startsWith("data:")) {
                    a.text(line, token(line), arrival);
                    if (line.contains("\"type\":\"RUN_ERROR\"")) {
                        a.fail("the run failed: " + line);
                    }
                }
            }

            @Override
            public void onError(Throwable e) {
                a.fail("reading the stream failed: " + e);
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
            if (conversation == null) {
                post("/v1/chat/completions", DIRECT_BODY, a);
                return;
            }
            ObjectNode body = Json.object().put("model", ScriptedModel.MODEL).put("stream", true);
            body.putObject("stream_options").put("include_usage", true);
            ArrayNode messages = body.putArray("messages");
            for (Said m : conversation) {
                messages.addObject().put("role", m.role()).put("content", m.content());
            }
            messages.addObject().put("role", "user").put("content", PROMPT);
            post("/v1/chat/completions", body.toString(), a);
        }

        @Override
        int token(String line) {
            return after(line, 0, "\"content\":\"");
        }
    }

    /** An AG-UI client over HTTP and SSE: a RunAgentInput per answer. */
    private final class AguiSse extends SseConnection {
        /** The thread of its follow-ups. */
        private final String threadId = UUID.randomUUID().toString();

        AguiSse(Measurement m, int port) {
            super(m, port);
        }

        @Override
        void ask(Answer a) {
            if (conversation == null) {
                post(Dialect.AGUI_SSE.path, Dialect.AGUI_SSE.request(UUID.randomUUID().toString(), Ids.next("run"),
                        a.userMessageId, PROMPT), a);
                return;
            }
            // The dialect's request, with the conversation so far before the new message.
            ObjectNode input;
            try {
                input = (ObjectNode) Json.MAPPER.readTree(Dialect.AGUI_SSE.request(threadId, Ids.next("run"),
                        a.userMessageId, PROMPT));
            } catch (JsonProcessingException e) {
                throw new UncheckedIOException(e);
            }
            ArrayNode messages = (ArrayNode) input.get("messages");
            for (int i = 0; i < conversation.size(); i++) {
                Said m = conversation.get(i);
                messages.insertObject(i).put("id", m.id()).put("role", m.role()).put("content", m.content());
            }
            post(Dialect.AGUI_SSE.path, input.toString(), a);
        }

        @Override
        int token(String line) {
            int type = line.indexOf("\"type\":\"TEXT_MESSAGE_CONTENT\"");
            if (type < 0 && line.contains("\"type\":\"TEXT_MESSAGE_START\"")) {
                int id = after(line, 0, "\"messageId\":\"");
                Answer a = current;
                if (id >= 0 && a != null) {
                    a.messageId = line.substring(id, line.indexOf('"', id));
                }
            }
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

        /** The conversation of its follow-ups. */
        private final String sessionId = UUID.randomUUID().toString();

        @Override
        void ask(Answer a) {
            String session = conversation == null ? UUID.randomUUID().toString() : sessionId;
            ws.sendText(Dialect.HAI_WS.request(session, null, null, PROMPT), true).exceptionally(e -> {
                a.fail("sending the request failed: " + e);
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
                    a.fail("an error frame: " + frame);
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
                a.fail("the WebSocket failed: " + error);
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
