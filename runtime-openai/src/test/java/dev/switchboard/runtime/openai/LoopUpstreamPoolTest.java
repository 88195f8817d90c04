package dev.switchboard.runtime.openai;

import dev.switchboard.core.UpstreamHttp;
import io.netty.channel.EventLoop;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The kept-alive connections to a model server: one idle past its keep-alive is closed by the
 * sweep, and one more than a loop keeps for an origin is closed as soon as its answer is over.
 */
class LoopUpstreamPoolTest {
    private static final String ANSWER = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi.\"},"
            + "\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

    private ServerSocket server;
    /** Connections the server accepted, and those of them the gateway's side closed. */
    private final AtomicInteger accepted = new AtomicInteger();
    private final AtomicInteger closedByClient = new AtomicInteger();
    /** When the last connection was closed by the gateway's side (System.nanoTime()). */
    private final AtomicReference<Long> lastClosedAt = new AtomicReference<>();
    /** When set, every answer waits for it: the requests of a test arrive before any is answered. */
    private volatile CountDownLatch answerWhen;

    @BeforeEach
    void startServer() throws IOException {
        server = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
        Thread accepting = new Thread(() -> {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    accepted.incrementAndGet();
                    Thread t = new Thread(() -> serve(s));
                    t.setDaemon(true);
                    t.start();
                } catch (IOException closed) {
                    return;
                }
            }
        });
        accepting.setDaemon(true);
        accepting.start();
    }

    @AfterEach
    void stopServer() throws IOException {
        server.close();
    }

    /** Answers each request on the connection with one streamed answer, until the other side closes it. */
    private void serve(Socket s) {
        try (s) {
            BufferedInputStream in = new BufferedInputStream(s.getInputStream());
            while (readRequest(in)) {
                CountDownLatch when = answerWhen;
                if (when != null) {
                    when.countDown();
                    when.await(10, TimeUnit.SECONDS);
                }
                s.getOutputStream().write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(ANSWER.length()) + "\r\n"
                        + ANSWER + "\r\n0\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
            }
            lastClosedAt.set(System.nanoTime());
            closedByClient.incrementAndGet();
        } catch (IOException | InterruptedException e) {
            // The test is over.
        }
    }

    /** Reads one request's head and its Content-Length body; false when the connection ended first. */
    static boolean readRequest(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        int b;
        while (!head.toString().endsWith("\r\n\r\n")) {
            if ((b = in.read()) < 0) {
                return false;
            }
            head.append((char) b);
        }
        int length = 0;
        for (String line : head.toString().split("\r\n")) {
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        return in.readNBytes(length).length == length;
    }

    /** One request and its answer on {@code loop}; completes with the answer's text when it is whole. */
    private CompletableFuture<String> ask(LoopUpstream upstream, EventLoop loop) {
        CompletableFuture<String> answer = new CompletableFuture<>();
        StringBuilder text = new StringBuilder();
        URI uri = URI.create("http://127.0.0.1:" + server.getLocalPort() + "/v1/chat/completions");
        LoopStream.open(upstream, loop, uri, "{}".getBytes(StandardCharsets.UTF_8),
                List.of(Map.entry("Content-Type", "application/json")), "the test server", Duration.ofSeconds(5),
                () -> false, new LoopStream.Listener() {
                    @Override
                    public void onEvent(LoopStream stream, UpstreamHttp.SseView event) {
                        if (event.is("[DONE]")) {
                            if (stream.done()) {
                                answer.complete(text.toString());
                            }
                        } else {
                            text.append(event.text());
                        }
                    }

                    @Override
                    public void onEnd(LoopStream stream) {
                        if (stream.done()) {
                            answer.complete(text.toString());
                        }
                    }

                    @Override
                    public void onFailure(String message, int httpStatus) {
                        answer.completeExceptionally(new IllegalStateException(message));
                    }
                });
        return answer;
    }

    private static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited 10 s").isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    @Test
    void anIdleConnectionIsClosedOnceItHasBeenKeptItsKeepAlive() throws Exception {
        Duration keepAlive = Duration.ofSeconds(1);
        try (LoopUpstream upstream = new LoopUpstream("pool-test", Runnable::run, Duration.ofSeconds(5), false,
                4, keepAlive, Duration.ofMillis(50))) {
            EventLoop loop = upstream.loopFor(null);
            assertThat(ask(upstream, loop).get(10, TimeUnit.SECONDS)).contains("Hi.");
            long askedAgainAt = System.nanoTime();
            assertThat(ask(upstream, loop).get(10, TimeUnit.SECONDS)).as("the kept connection answers again")
                    .contains("Hi.");
            assertThat(accepted).hasValue(1);
            assertThat(closedByClient).as("kept while within its keep-alive").hasValue(0);

            waitFor(() -> closedByClient.get() == 1);
            assertThat(lastClosedAt.get() - askedAgainAt).as("closed no sooner than its keep-alive after its last use")
                    .isGreaterThanOrEqualTo(keepAlive.toNanos());

            assertThat(ask(upstream, loop).get(10, TimeUnit.SECONDS)).as("a new connection after it").contains("Hi.");
            assertThat(accepted).hasValue(2);
        }
    }

    @Test
    void aConnectionBeyondTheIdleOnesALoopKeepsIsClosedWhenItsAnswerIsOver() throws Exception {
        try (LoopUpstream upstream = new LoopUpstream("pool-test", Runnable::run, Duration.ofSeconds(5), false,
                2, Duration.ofSeconds(60), Duration.ofSeconds(10))) {
            EventLoop loop = upstream.loopFor(null);
            // Three requests at once: each on a connection of its own, none answered before all arrived.
            answerWhen = new CountDownLatch(3);
            List<CompletableFuture<String>> answers = List.of(ask(upstream, loop), ask(upstream, loop),
                    ask(upstream, loop));
            for (CompletableFuture<String> a : answers) {
                assertThat(a.get(10, TimeUnit.SECONDS)).contains("Hi.");
            }
            assertThat(accepted).hasValue(3);
            waitFor(() -> closedByClient.get() == 1);
            Thread.sleep(200);
            assertThat(closedByClient).as("the two the loop keeps stay open").hasValue(1);

            answerWhen = null;
            assertThat(ask(upstream, loop).get(10, TimeUnit.SECONDS)).contains("Hi.");
            assertThat(ask(upstream, loop).get(10, TimeUnit.SECONDS)).contains("Hi.");
            assertThat(accepted).as("the next requests go on the kept connections").hasValue(3);
        }
    }
}
