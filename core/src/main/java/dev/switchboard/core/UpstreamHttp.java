package dev.switchboard.core;

import dev.switchboard.core.spi.OptionSpec;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * Reads an upstream's HTTP answers with the JDK {@link java.net.http.HttpClient} without holding
 * a thread: a {@code text/event-stream} decoded into events as its bytes arrive, and bodies read
 * up to a limit. The {@code agui} runtime reads its agent's stream with these, the {@code openai}
 * runtime calls its tools; both describe failures for the operator with {@link #describe} and
 * {@link #errorText}. (The {@code openai} runtime reads the model's stream on the client's event
 * loop instead, with {@link SseLines}.)
 */
public final class UpstreamHttp {
    /**
     * The option of the time an upstream may take to answer and between its events, read by every
     * runtime that calls one (declared alike by each, so it is one option).
     */
    public static final OptionSpec TIMEOUT_OPTION = OptionSpec.integer("upstream-timeout-seconds", 60, 1, 3_600,
            "runtimes that call an upstream (openai, agui): time allowed for it to answer and between its events");

    /** Longest event-stream line accepted, as long as the longest JSON document {@link Json} reads. */
    public static final int MAX_LINE_BYTES = 16 << 20;
    /** Longest error body read from an upstream. */
    public static final int MAX_ERROR_BODY_BYTES = 16 * 1024;

    private UpstreamHttp() {
    }

    /** One dispatched server-sent event: its {@code event} name ({@code message} when unnamed) and data. */
    public record Sse(String event, String data) {
    }

    /**
     * One dispatched server-sent event as {@link SseLines} hands it on: its {@code event} name
     * ({@code message} when unnamed) and its data's UTF-8 bytes, in a buffer the reader fills again
     * with the next event. It is read during the call that gets it; {@link #text()} makes a string
     * that outlives it. A model's tokens are read from the bytes, with no string of each chunk.
     */
    public static final class SseView {
        private String event = "message";
        private byte[] data = new byte[512];
        private int length;

        public String event() {
            return event;
        }

        /** The data's length in bytes. */
        public int length() {
            return length;
        }

        /** The data's byte at {@code index}, below {@link #length()}. */
        public byte byteAt(int index) {
            return data[java.util.Objects.checkIndex(index, length)];
        }

        /** Copies {@code n} bytes of the data from {@code from} into {@code into} at {@code at}. */
        public void copy(int from, byte[] into, int at, int n) {
            java.util.Objects.checkFromIndexSize(from, n, length);
            System.arraycopy(data, from, into, at, n);
        }

        /** The data as a string. */
        public String text() {
            return new String(data, 0, length, StandardCharsets.UTF_8);
        }

        /** Whether the data is exactly this ASCII text (such as {@code [DONE]}), read without a string. */
        public boolean is(String ascii) {
            if (ascii.length() != length) {
                return false;
            }
            for (int i = 0; i < length; i++) {
                if (data[i] != ascii.charAt(i)) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public String toString() {
            return event + ": " + text();
        }
    }

    /** What an event stream tells its reader; the calls are serial, and none follows a cancel. */
    public interface SseListener {
        /** One event of the stream. */
        void onEvent(Sse event);

        /** The stream ended normally. */
        void onEnd();

        /** The stream broke: the connection failed, or a line was over {@link #MAX_LINE_BYTES}. */
        void onError(Throwable error);
    }

    /**
     * The threads and the HTTP client of one upstream runtime: a cached pool for a run's own work
     * (no thread is held by a run), a timer for silence checks, and an HTTP/1.1 client (plain-http
     * servers are asked no h2c upgrade). {@link #close} stops them.
     *
     * <p>The client's callbacks (answers, body subscribers and the listeners they call) run on its
     * selector thread, where the bytes arrive, not on the pool: an event read from an upstream goes
     * to the hub without waking another thread (bench/NOTES.md has the A/B). They must not block: every
     * upstream of the runtime waits while one does. (The hub's back-pressure, when the store falls
     * far behind, does hold them all, as it should.)
     */
    public static final class Client implements AutoCloseable {
        public final ExecutorService executor;
        public final ScheduledExecutorService timer;
        public final HttpClient http;

        /** Threads are named {@code switchboard-<name>-N} and {@code switchboard-<name>-timer}. */
        public Client(String name, Duration connectTimeout) {
            AtomicInteger n = new AtomicInteger();
            this.executor = Executors.newCachedThreadPool(r -> {
                Thread t = new Thread(r, "switchboard-" + name + "-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
            this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "switchboard-" + name + "-timer");
                t.setDaemon(true);
                return t;
            });
            this.http = HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(connectTimeout)
                    .followRedirects(HttpClient.Redirect.NORMAL)
                    .executor(Runnable::run) // see the class comment
                    .build();
        }

        @Override
        public void close() {
            timer.shutdownNow();
            executor.shutdownNow();
        }
    }

    /** A body subscriber that decodes an event stream for {@code listener}. */
    public static SseSubscriber sse(SseListener listener) {
        return new SseSubscriber(listener);
    }

    /**
     * A body subscriber for a text body of at most {@code maxBytes}: a longer body is cut there,
     * ends with {@code …}, and the rest is not read.
     */
    public static HttpResponse.BodySubscriber<String> text(int maxBytes) {
        return new BoundedText(maxBytes);
    }

    /**
     * One streamed request to an upstream. Its events go to the listener until the listener calls
     * {@link #done()} or {@link #fail}, or the stream is {@link #cancel() cancelled}; whatever goes
     * wrong on the way (a connection that fails, an HTTP error status, a body that is not an event
     * stream, an upstream silent for longer than the timeout, first before its answer and then
     * between events) is reported once, as {@link Listener#onFailure} with a message for the operator.
     */
    public static final class EventStream implements SseListener {
        /**
         * What the owner of a stream hears. Events come one at a time; none comes after a failure or
         * {@link #done()}, though a failure found by the silence check may be reported while an event
         * is still being handled.
         */
        public interface Listener {
            void onEvent(EventStream stream, Sse event);

            /** The body ended with no failure; the listener decides whether the answer was whole. */
            void onEnd(EventStream stream);

            /** The stream failed; {@code httpStatus} is the upstream's status, or 0 when it gave none. */
            void onFailure(String message, int httpStatus);
        }

        private final String upstream;
        private final String method;
        private final String uri;
        private final Duration timeout;
        private final ScheduledExecutorService timer;
        private final Listener listener;
        private final AtomicBoolean over = new AtomicBoolean();
        private volatile long lastActivity = System.nanoTime();
        private volatile boolean answered;
        private volatile SseSubscriber body;
        private volatile CompletableFuture<?> exchange;
        private ScheduledFuture<?> watchdog;

        private EventStream(HttpRequest request, String upstream, Duration timeout, ScheduledExecutorService timer,
                            Listener listener) {
            this.upstream = upstream;
            this.method = request.method();
            this.uri = shown(request.uri());
            this.timeout = timeout;
            this.timer = timer;
            this.listener = listener;
        }

        /**
         * Sends {@code request} and streams its answer to {@code listener}. {@code upstream} names the
         * other side in messages, such as "the model server at http://…"; {@code timer} runs the
         * check for silence.
         */
        public static EventStream open(HttpClient client, HttpRequest request, String upstream, Duration timeout,
                                       ScheduledExecutorService timer, Listener listener) {
            EventStream stream = new EventStream(request, upstream, timeout, timer, listener);
            stream.watch(timeout.toNanos());
            CompletableFuture<HttpResponse<Void>> f = client.sendAsync(request, stream::bodyFor);
            stream.exchange = f;
            f.whenComplete((r, e) -> {
                if (e != null) {
                    stream.fail(describe(e, upstream, timeout), 0);
                }
            });
            if (stream.over.get()) {
                f.cancel(true);
            }
            return stream;
        }

        private HttpResponse.BodySubscriber<Void> bodyFor(HttpResponse.ResponseInfo info) {
            answered = true;
            lastActivity = System.nanoTime();
            int status = info.statusCode();
            if (status / 100 != 2) {
                return HttpResponse.BodySubscribers.mapping(text(MAX_ERROR_BODY_BYTES), text -> {
                    fail(upstream + " answered HTTP " + status + " to " + method + " " + uri + ": " + errorText(text),
                            status);
                    return null;
                });
            }
            String type = info.headers().firstValue("Content-Type").orElse("");
            if (!type.isEmpty() && !type.toLowerCase(Locale.ROOT).startsWith("text/event-stream")) {
                return HttpResponse.BodySubscribers.mapping(text(MAX_ERROR_BODY_BYTES), text -> {
                    fail(upstream + " answered " + method + " " + uri + " with " + type
                            + " instead of an event stream (text/event-stream)", 0);
                    return null;
                });
            }
            SseSubscriber s = sse(this);
            body = s;
            return s;
        }

        @Override
        public void onEvent(Sse event) {
            lastActivity = System.nanoTime();
            if (!over.get()) {
                listener.onEvent(this, event);
            }
        }

        @Override
        public void onEnd() {
            if (!over.get()) {
                listener.onEnd(this);
            }
        }

        @Override
        public void onError(Throwable error) {
            fail(describe(error, upstream, timeout), 0);
        }

        /** Ends the stream well: the listener hears nothing more. True the first time. */
        public boolean done() {
            if (!over.compareAndSet(false, true)) {
                return false;
            }
            stopWatching();
            return true;
        }

        /** Fails the stream: drops the connection and reports the message, once. */
        public void fail(String message, int httpStatus) {
            if (over.compareAndSet(false, true)) {
                stopWatching();
                dropConnection();
                listener.onFailure(message, httpStatus);
            }
        }

        /** Drops the connection and reports nothing. */
        public void cancel() {
            over.set(true);
            stopWatching();
            dropConnection();
        }

        private void dropConnection() {
            SseSubscriber b = body;
            if (b != null) {
                b.cancel();
            }
            CompletableFuture<?> x = exchange;
            if (x != null) {
                x.cancel(true);
            }
        }

        private synchronized void watch(long delayNanos) {
            if (!over.get()) {
                watchdog = timer.schedule(this::check, delayNanos, TimeUnit.NANOSECONDS);
            }
        }

        private void check() {
            if (over.get()) {
                return;
            }
            long limit = timeout.toNanos();
            long idle = System.nanoTime() - lastActivity;
            if (idle < limit) {
                watch(limit - idle);
            } else if (!answered) {
                fail(upstream + " did not answer within " + timeout.toSeconds() + " s (--upstream-timeout-seconds)", 0);
            } else {
                fail(upstream + " sent nothing for " + timeout.toSeconds()
                        + " s in the middle of its answer (--upstream-timeout-seconds)", 0);
            }
        }

        private synchronized void stopWatching() {
            if (watchdog != null) {
                watchdog.cancel(false);
            }
        }
    }

    /** An IPv4 address in dotted decimal, as a URL's host may be. */
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

    /**
     * Whether the JDK's client reaches {@code url}'s host without a name lookup on the thread that
     * sends the request: the host is an address (IPv4, or IPv6 in brackets) or {@code localhost},
     * which the hosts file answers. For any other name the client may ask the resolver on the
     * sending thread when it opens a connection (the JVM caches an answer for some 30 s), which can
     * take as long as the resolver does.
     */
    public static boolean needsNoLookup(URI url) {
        String host = url.getHost();
        if (host == null) {
            return false;
        }
        return host.startsWith("[") || IPV4.matcher(host).matches() || host.equalsIgnoreCase("localhost");
    }

    /**
     * A URL as messages and logs show it: without its user info, and with its query (which may hold
     * a key) elided.
     */
    public static String shown(URI url) {
        if (url.getRawUserInfo() == null && url.getRawQuery() == null) {
            return url.toString();
        }
        return url.getScheme() + "://" + url.getHost() + (url.getPort() < 0 ? "" : ":" + url.getPort())
                + (url.getRawPath() == null ? "" : url.getRawPath()) + (url.getRawQuery() == null ? "" : "?…");
    }

    /** What went wrong with a request to {@code upstream}, for the operator. */
    public static String describe(Throwable error, String upstream, Duration timeout) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof HttpConnectTimeoutException) {
            return "could not connect to " + upstream + " within " + timeout.toSeconds() + " s";
        }
        if (t instanceof HttpTimeoutException) {
            return upstream + " did not answer within " + timeout.toSeconds() + " s";
        }
        if (t instanceof ConnectException) {
            return "cannot connect to " + upstream + ": "
                    + (t.getMessage() == null ? "connection refused" : t.getMessage().toLowerCase(Locale.ROOT))
                    + "; is it running, and is its URL right?";
        }
        if (t instanceof CancellationException) {
            return "the request to " + upstream + " was cancelled";
        }
        if (t instanceof IOException) {
            return "the connection to " + upstream + " failed: "
                    + (t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage());
        }
        return "the request to " + upstream + " failed: " + t;
    }

    /**
     * The message of an error body as OpenAI-style and AG-UI servers write them:
     * {@code {"error":{"message"}}}, {@code {"error":"…"}}, {@code {"message"}} or {@code {"detail"}};
     * else the body itself, shortened.
     */
    public static String errorText(String body) {
        if (body == null || body.isBlank()) {
            return "(no message)";
        }
        JsonNode node;
        try {
            node = Json.parseStrict(body);
        } catch (JsonProcessingException e) {
            return shorten(body);
        }
        JsonNode error = node.get("error");
        if (error != null && error.isObject() && error.path("message").isTextual()) {
            return error.get("message").textValue();
        }
        if (error != null && error.isTextual()) {
            return error.textValue();
        }
        for (String field : new String[] {"message", "detail"}) {
            if (node.path(field).isTextual()) {
                return node.get(field).textValue();
            }
        }
        return shorten(body);
    }

    /** Upstream text cut to 300 characters, for messages. */
    public static String shorten(String text) {
        String s = text == null ? "" : text.strip();
        return s.length() <= 300 ? s : s.substring(0, 300) + "…";
    }

    /**
     * Decodes an event stream's bytes as they arrive, as the HTML standard's event-stream
     * interpretation does: lines end at CR, LF or CRLF (all ASCII, so never inside a multi-byte UTF-8
     * character, and a line may span reads), {@code data} lines join with a newline, a blank line
     * dispatches, {@code :} starts a comment, one space after the colon is dropped; {@code id} and
     * {@code retry}, which steer reconnection, are not kept by a one-shot reader. Unlike the
     * standard, data left pending when the stream ends is dispatched, as the official AG-UI client
     * does. It works on bytes: an event's data reaches its reader ({@link SseView}) without a string
     * made of it, nor of its lines. What a reader of an event stream keeps between its reads,
     * whichever client reads it.
     */
    public static final class SseLines {
        private static final byte[] DATA = {'d', 'a', 't', 'a'};
        private static final byte[] EVENT = {'e', 'v', 'e', 'n', 't'};

        private final SseView event = new SseView();
        private byte[] line = new byte[512];
        private int length;
        private boolean afterCr;
        /** Whether a data line came since the last dispatch (its data may still be empty). */
        private boolean hasData;
        /** The pending event's name, from its {@code event} line; null when it has none. */
        private String name;

        /**
         * Takes the bytes between the buffer's position and its limit (the position is left as it
         * is), handing each event they complete to {@code sink} while {@code open} holds; runs
         * between line ends are copied whole, not byte by byte.
         *
         * @throws IOException when a line, or an event's data, is longer than {@link #MAX_LINE_BYTES}
         */
        public void take(ByteBuffer buffer, Consumer<SseView> sink, BooleanSupplier open) throws IOException {
            int i = buffer.position();
            int end = buffer.limit();
            while (i < end && open.getAsBoolean()) {
                byte b = buffer.get(i);
                if (b == '\n' || b == '\r') {
                    endOfLine(b, sink);
                    i++;
                    continue;
                }
                afterCr = false;
                int start = i;
                while (i < end && (b = buffer.get(i)) != '\n' && b != '\r') {
                    i++;
                }
                append(buffer, start, i - start);
            }
        }

        /**
         * The stream ended: the line still pending, then the event still pending, go to {@code sink}.
         *
         * @throws IOException when that line makes the event's data longer than {@link #MAX_LINE_BYTES}
         */
        public void end(Consumer<SseView> sink) throws IOException {
            if (length > 0) {
                line(sink);
            }
            dispatch(sink);
        }

        private void endOfLine(byte b, Consumer<SseView> sink) throws IOException {
            if (b == '\n' && afterCr) {
                afterCr = false;
                return;
            }
            afterCr = b == '\r';
            line(sink);
        }

        /** Takes the line in {@link #line}, then empties it. */
        private void line(Consumer<SseView> sink) throws IOException {
            int n = length;
            length = 0;
            if (n == 0) {
                dispatch(sink);
                return;
            }
            byte[] l = line;
            if (l[0] == ':') {
                return;
            }
            int colon = 0;
            while (colon < n && l[colon] != ':') {
                colon++;
            }
            int from = colon == n ? n : colon + 1 < n && l[colon + 1] == ' ' ? colon + 2 : colon + 1;
            if (fieldIs(l, colon, DATA)) {
                data(l, from, n - from);
            } else if (fieldIs(l, colon, EVENT)) {
                name = new String(l, from, n - from, StandardCharsets.UTF_8);
            }
        }

        private static boolean fieldIs(byte[] l, int fieldLength, byte[] field) {
            return fieldLength == field.length && Arrays.equals(l, 0, fieldLength, field, 0, fieldLength);
        }

        /** Joins a data line's value to the pending event's data. */
        private void data(byte[] from, int at, int n) throws IOException {
            SseView e = event;
            int joined = e.length + (hasData ? 1 : 0) + n;
            if (joined > MAX_LINE_BYTES) {
                throw new IOException("an event-stream event's data is longer than " + MAX_LINE_BYTES + " bytes");
            }
            if (joined > e.data.length) {
                e.data = Arrays.copyOf(e.data, Math.min(MAX_LINE_BYTES, Math.max(joined, e.data.length * 2)));
            }
            if (hasData) {
                e.data[e.length++] = '\n';
            }
            System.arraycopy(from, at, e.data, e.length, n);
            e.length += n;
            hasData = true;
        }

        private void dispatch(Consumer<SseView> sink) {
            if (hasData) {
                event.event = name == null || name.isEmpty() ? "message" : name;
                sink.accept(event);
            }
            event.length = 0;
            hasData = false;
            name = null;
        }

        private void append(ByteBuffer buffer, int from, int n) throws IOException {
            if (length + n > line.length) {
                if (length + n > MAX_LINE_BYTES) {
                    throw new IOException("an event-stream line is longer than " + MAX_LINE_BYTES + " bytes");
                }
                line = Arrays.copyOf(line, Math.min(MAX_LINE_BYTES, Math.max(length + n, line.length * 2)));
            }
            buffer.get(from, line, length, n);
            length += n;
        }
    }

    /**
     * Reads the body as an event stream ({@link SseLines}) for its listener. {@link #cancel()} stops
     * the body and closes the connection.
     */
    public static final class SseSubscriber implements HttpResponse.BodySubscriber<Void> {
        private final SseListener listener;
        private final SseLines lines = new SseLines();
        private final CompletableFuture<Void> body = new CompletableFuture<>();
        private volatile Flow.Subscription subscription;
        private volatile boolean cancelled;
        private final Consumer<SseView> deliver = this::deliver;
        private final BooleanSupplier open = () -> !cancelled;

        private SseSubscriber(SseListener listener) {
            this.listener = listener;
        }

        /** Stops reading; the listener hears nothing more. */
        public void cancel() {
            cancelled = true;
            Flow.Subscription s = subscription;
            if (s != null) {
                s.cancel();
            }
            body.complete(null);
        }

        @Override
        public CompletionStage<Void> getBody() {
            return body;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            if (cancelled) {
                s.cancel();
            } else {
                s.request(1);
            }
        }

        @Override
        public void onNext(List<ByteBuffer> buffers) {
            try {
                for (ByteBuffer buffer : buffers) {
                    lines.take(buffer, deliver, open);
                }
            } catch (IOException | RuntimeException e) {
                fail(e);
                return;
            }
            if (!cancelled) {
                subscription.request(1);
            }
        }

        private void deliver(SseView event) {
            if (!cancelled) {
                listener.onEvent(new Sse(event.event(), event.text()));
            }
        }

        private void fail(Throwable error) {
            boolean tell = !cancelled;
            cancel();
            if (tell) {
                listener.onError(error);
            }
        }

        @Override
        public void onError(Throwable error) {
            if (!cancelled) {
                cancelled = true;
                body.completeExceptionally(error);
                listener.onError(error);
            }
        }

        @Override
        public void onComplete() {
            if (cancelled) {
                return;
            }
            try {
                lines.end(deliver);
            } catch (IOException | RuntimeException e) {
                fail(e);
                return;
            }
            if (!cancelled) {
                cancelled = true;
                body.complete(null);
                listener.onEnd();
            }
        }
    }

    /** Collects a body up to a limit, then stops reading. */
    private static final class BoundedText implements HttpResponse.BodySubscriber<String> {
        private final int maxBytes;
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final CompletableFuture<String> result = new CompletableFuture<>();
        private Flow.Subscription subscription;

        BoundedText(int maxBytes) {
            this.maxBytes = maxBytes;
        }

        @Override
        public CompletionStage<String> getBody() {
            return result;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            s.request(1);
        }

        @Override
        public void onNext(List<ByteBuffer> buffers) {
            for (ByteBuffer buffer : buffers) {
                int room = maxBytes - bytes.size();
                int n = Math.min(room, buffer.remaining());
                byte[] chunk = new byte[n];
                buffer.get(chunk);
                bytes.write(chunk, 0, n);
                if (buffer.hasRemaining()) {
                    subscription.cancel();
                    result.complete(bytes.toString(StandardCharsets.UTF_8) + "…");
                    return;
                }
            }
            subscription.request(1);
        }

        @Override
        public void onError(Throwable error) {
            result.completeExceptionally(error);
        }

        @Override
        public void onComplete() {
            result.complete(bytes.toString(StandardCharsets.UTF_8));
        }
    }
}
