package dev.switchboard.core;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * Reads an upstream's HTTP answers with the JDK {@link java.net.http.HttpClient} without holding
 * a thread: a {@code text/event-stream} decoded into events as its bytes arrive, and bodies read
 * up to a limit. Runtimes that call a model server or another agent use these.
 */
public final class UpstreamHttp {
    /** Longest event-stream line accepted, as long as the longest JSON document {@link Json} reads. */
    public static final int MAX_LINE_BYTES = 16 << 20;

    private UpstreamHttp() {
    }

    /** One dispatched server-sent event: its {@code event} name ({@code message} when unnamed) and data. */
    public record Sse(String event, String data) {
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
     * Decodes server-sent events line by line, as the HTML standard's event-stream interpretation
     * does: {@code data} lines join with a newline, a blank line dispatches, {@code :} starts a
     * comment, one space after the colon is dropped. Unlike the standard, data left pending when
     * the stream ends is dispatched, as the official AG-UI client does.
     */
    public static final class SseDecoder {
        private final StringBuilder data = new StringBuilder();
        private boolean hasData;
        private String event;

        /** Takes one line without its terminator; returns the event it dispatches, or null. */
        public Sse line(String line) {
            if (line.isEmpty()) {
                return dispatch();
            }
            if (line.charAt(0) == ':') {
                return null;
            }
            int colon = line.indexOf(':');
            String field = colon < 0 ? line : line.substring(0, colon);
            String value = "";
            if (colon >= 0) {
                int from = colon + 1 < line.length() && line.charAt(colon + 1) == ' ' ? colon + 2 : colon + 1;
                value = line.substring(from);
            }
            switch (field) {
                case "data" -> {
                    if (hasData) {
                        data.append('\n');
                    }
                    data.append(value);
                    hasData = true;
                }
                case "event" -> event = value;
                default -> {
                    // id and retry steer reconnection, which a one-shot reader does not do
                }
            }
            return null;
        }

        /** The stream ended: the event still pending, or null. */
        public Sse end() {
            return dispatch();
        }

        private Sse dispatch() {
            Sse out = hasData ? new Sse(event == null || event.isEmpty() ? "message" : event, data.toString()) : null;
            data.setLength(0);
            hasData = false;
            event = null;
            return out;
        }
    }

    /**
     * Splits the body into lines at CR, LF or CRLF as bytes arrive (both are ASCII, so never part of
     * a multi-byte UTF-8 character) and feeds them to an {@link SseDecoder}. {@link #cancel()} stops
     * the body and closes the connection.
     */
    public static final class SseSubscriber implements HttpResponse.BodySubscriber<Void> {
        private final SseListener listener;
        private final SseDecoder decoder = new SseDecoder();
        private final CompletableFuture<Void> body = new CompletableFuture<>();
        private volatile Flow.Subscription subscription;
        private volatile boolean cancelled;
        private byte[] line = new byte[512];
        private int length;
        private boolean afterCr;

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
                    for (int i = buffer.position(), end = buffer.limit(); i < end && !cancelled; i++) {
                        take(buffer.get(i));
                    }
                }
            } catch (IOException | RuntimeException e) {
                fail(e);
                return;
            }
            if (!cancelled) {
                subscription.request(1);
            }
        }

        private void take(byte b) throws IOException {
            if (b == '\n' && afterCr) {
                afterCr = false;
                return;
            }
            afterCr = b == '\r';
            if (b == '\n' || b == '\r') {
                String text = new String(line, 0, length, StandardCharsets.UTF_8);
                length = 0;
                deliver(decoder.line(text));
                return;
            }
            if (length == line.length) {
                if (length >= MAX_LINE_BYTES) {
                    throw new IOException("an event-stream line is longer than " + MAX_LINE_BYTES + " bytes");
                }
                line = Arrays.copyOf(line, Math.min(MAX_LINE_BYTES, length * 2));
            }
            line[length++] = b;
        }

        private void deliver(Sse event) {
            if (event != null && !cancelled) {
                listener.onEvent(event);
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
                if (length > 0) {
                    String text = new String(line, 0, length, StandardCharsets.UTF_8);
                    length = 0;
                    deliver(decoder.line(text));
                }
                deliver(decoder.end());
            } catch (RuntimeException e) {
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
