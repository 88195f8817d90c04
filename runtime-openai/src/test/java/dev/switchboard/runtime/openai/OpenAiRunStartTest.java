package dev.switchboard.runtime.openai;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Principal;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.RunRequest;
import dev.switchboard.core.spi.Settings;
import dev.switchboard.core.testing.RecordingRunContext;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where a run reads its model: the history on the thread that starts it, the answer on the event
 * loop of the connection that asked for the run (or the runtime's own loop), over connections kept
 * alive between runs; a host name is looked up off the loop.
 */
class OpenAiRunStartTest {
    private HttpServer model;
    /** The remote address of every request the model server answered. */
    private final Set<InetSocketAddress> callers = ConcurrentHashMap.newKeySet();
    /** Held by a test to keep the model between its first token and the rest. */
    private final AtomicReference<CountDownLatch> hold = new AtomicReference<>();
    /** The body of the last request the model server answered. */
    private final AtomicReference<String> lastBody = new AtomicReference<>();
    private EventLoopGroup loops;

    @BeforeEach
    void startModel() throws IOException {
        model = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        model.setExecutor(Executors.newCachedThreadPool());
        model.createContext("/v1/chat/completions", this::answer);
        model.start();
        loops = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    }

    @AfterEach
    void stop() {
        model.stop(0);
        loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    /** Streams "One, two, three." in three tokens; between the first and the rest, waits for {@link #hold}. */
    private void answer(HttpExchange ex) throws IOException {
        try (ex) {
            lastBody.set(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            callers.add(ex.getRemoteAddress());
            ex.getResponseHeaders().set("Content-Type", "text/event-stream");
            ex.sendResponseHeaders(200, 0);
            OutputStream out = ex.getResponseBody();
            token(out, "One, ");
            CountDownLatch h = hold.get();
            if (h != null) {
                try {
                    h.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            token(out, "two, ");
            token(out, "three.");
            out.write(("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
                    + "data: [DONE]\n\n").getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void token(OutputStream out, String text) throws IOException {
        out.write(("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text + "\"},\"finish_reason\":null}]}\n\n")
                .getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private String baseUrl() {
        return "http://127.0.0.1:" + model.getAddress().getPort() + "/v1";
    }

    private static AgentRuntime runtime(String baseUrl) {
        Map<String, String> options = Map.of("openai-base-url", baseUrl, "model", "m", "upstream-timeout-seconds", "5");
        Settings settings = key -> Optional.ofNullable(options.get(key));
        return new OpenAiRuntimeProvider().create(settings);
    }

    private static RunRequest request(String runId) {
        return new RunRequest("c-1", runId, null, Principal.ANONYMOUS,
                List.of(InputMessage.text("m-" + runId, Role.USER, "count")), List.of(), null, null, null, null);
    }

    private static Thread threadOf(EventLoop loop) throws Exception {
        return loop.submit(Thread::currentThread).get(5, TimeUnit.SECONDS);
    }

    @Test
    void theAnswerIsReadOnTheLoopOfTheConnectionThatAskedForTheRunOverOneKeptAliveConnection() throws Exception {
        EventLoop home = loops.next();
        Thread loopThread = threadOf(home);
        try (AgentRuntime openai = runtime(baseUrl())) {
            for (String run : List.of("run-1", "run-2")) {
                RecordingRunContext ctx = new RecordingRunContext().home(home);
                openai.start(request(run), ctx);

                assertThat(ctx.awaitEnd(Duration.ofSeconds(10))).isInstanceOf(Event.RunFinished.class);
                assertThat(ctx.text()).isEqualTo("One, two, three.");
                assertThat(ctx.historyReader()).as("the history, on the starting thread").isSameAs(Thread.currentThread());
                assertThat(ctx.emitters()).as("every event, on the connection's loop").containsOnly(loopThread);
            }
        }
        assertThat(callers).as("both runs' requests came over one connection").hasSize(1);
    }

    @Test
    void aRequestOnAKeptAliveConnectionTheServerClosesUnansweredIsSentAgainOnANewOne() throws Exception {
        // A server that answers the first request on a connection and closes it, unanswered, at the
        // next one, as a server does that drops an idle connection while the request is on its way.
        AtomicInteger connections = new AtomicInteger();
        AtomicInteger requests = new AtomicInteger();
        try (ServerSocket server = new ServerSocket(0, 16, InetAddress.getLoopbackAddress())) {
            Thread accepting = new Thread(() -> {
                while (!server.isClosed()) {
                    try (Socket s = server.accept()) {
                        connections.incrementAndGet();
                        BufferedInputStream in = new BufferedInputStream(s.getInputStream());
                        LoopUpstreamPoolTest.readRequest(in);
                        requests.incrementAndGet();
                        String body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Again.\"},"
                                + "\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
                        s.getOutputStream().write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                + "Transfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(body.length()) + "\r\n"
                                + body + "\r\n0\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                        s.getOutputStream().flush();
                        if (LoopUpstreamPoolTest.readRequest(in)) {
                            requests.incrementAndGet();
                        }
                    } catch (IOException closed) {
                        // The test is over.
                    }
                }
            });
            accepting.setDaemon(true);
            accepting.start();
            EventLoop home = loops.next();
            try (AgentRuntime openai = runtime("http://127.0.0.1:" + server.getLocalPort() + "/v1")) {
                for (String run : List.of("run-1", "run-2")) {
                    RecordingRunContext ctx = new RecordingRunContext().home(home);
                    openai.start(request(run), ctx);

                    assertThat(ctx.awaitEnd(Duration.ofSeconds(10))).as(run).isInstanceOf(Event.RunFinished.class);
                    assertThat(ctx.text()).isEqualTo("Again.");
                }
            }
            assertThat(requests.get()).as("run-2's request, sent on the kept connection, then on a new one").isEqualTo(3);
            assertThat(connections.get()).isEqualTo(2);
        }
    }

    private static final List<InputMessage> EARLIER = List.of(InputMessage.text("m-0", Role.USER, "say something"),
            InputMessage.text("m-1", Role.ASSISTANT, "something"));

    @Test
    void aRunStartedOnItsLoopWithTheHistoryInMemorySendsFromThereAndDoesNotReadTheStore() throws Exception {
        EventLoop home = loops.next();
        Thread loopThread = threadOf(home);
        try (AgentRuntime openai = runtime(baseUrl())) {
            assertThat(openai.startsWithoutWaiting(request("run-1").messages())).isTrue();
            assertThat(openai.readsHistory()).isTrue();
            RecordingRunContext ctx = new RecordingRunContext(EARLIER).home(home).historyInMemory(true);
            home.submit(() -> openai.start(request("run-1"), ctx)).get(5, TimeUnit.SECONDS);

            assertThat(ctx.awaitEnd(Duration.ofSeconds(10))).isInstanceOf(Event.RunFinished.class);
            assertThat(ctx.text()).isEqualTo("One, two, three.");
            assertThat(ctx.historyReader()).as("the store's history was not read").isNull();
            assertThat(lastBody.get()).as("the model got the history").contains("\"say something\"", "\"something\"",
                    "\"count\"");
            assertThat(ctx.emitters()).containsOnly(loopThread);
        }
    }

    @Test
    void aRunStartedOnItsLoopWhoseHistoryOnlyTheStoreHoldsReadsItOffTheLoop() throws Exception {
        EventLoop home = loops.next();
        Thread loopThread = threadOf(home);
        try (AgentRuntime openai = runtime(baseUrl())) {
            RecordingRunContext ctx = new RecordingRunContext(EARLIER).home(home);
            home.submit(() -> openai.start(request("run-1"), ctx)).get(5, TimeUnit.SECONDS);

            assertThat(ctx.awaitEnd(Duration.ofSeconds(10))).isInstanceOf(Event.RunFinished.class);
            assertThat(ctx.historyReader()).as("read, on the runtime's pool").isNotNull().isNotSameAs(loopThread);
            assertThat(lastBody.get()).contains("\"say something\"", "\"count\"");
            assertThat(ctx.emitters()).containsOnly(loopThread);
        }
    }

    @Test
    void aRunStartedOnItsLoopWhileTheRuntimeClosesFailsAsUnavailable() throws Exception {
        EventLoop home = loops.next();
        AgentRuntime openai = runtime(baseUrl());
        openai.close();
        RecordingRunContext ctx = new RecordingRunContext(EARLIER).home(home);
        home.submit(() -> openai.start(request("run-1"), ctx)).get(5, TimeUnit.SECONDS);

        assertThat(ctx.awaitEnd(Duration.ofSeconds(5))).isInstanceOfSatisfying(Event.RunFailed.class, f -> {
            assertThat(f.code()).isEqualTo(ErrorCode.UNAVAILABLE);
            assertThat(f.message()).isEqualTo("the gateway is stopping");
        });
        assertThat(ctx.historyReader()).as("the store's history was not read").isNull();
    }

    @Test
    void aRunWithNoConnectionOfItsOwnReadsOnTheRuntimesLoop() {
        try (AgentRuntime openai = runtime(baseUrl())) {
            RecordingRunContext ctx = new RecordingRunContext();
            openai.start(request("run-1"), ctx);

            assertThat(ctx.awaitEnd(Duration.ofSeconds(10))).isInstanceOf(Event.RunFinished.class);
            assertThat(ctx.text()).isEqualTo("One, two, three.");
            assertThat(ctx.emitters()).allSatisfy(t -> assertThat(t.getName()).isEqualTo("switchboard-openai-loop"));
        }
    }

    @Test
    void whileTheStoreIsBehindTheAnswerIsNotReadOn() throws Exception {
        hold.set(new CountDownLatch(1));
        AtomicBoolean behind = new AtomicBoolean(true);
        try (AgentRuntime openai = runtime(baseUrl())) {
            RecordingRunContext ctx = new RecordingRunContext().backedUp(behind::get).home(loops.next());
            openai.start(request("run-1"), ctx);
            // The first token is read (and emitted) before the reader sees the store behind.
            waitFor(() -> !ctx.events(Event.TextDelta.class).isEmpty());
            hold.get().countDown();
            Thread.sleep(300);
            assertThat(ctx.events(Event.TextDelta.class)).as("nothing read on while the store is behind").hasSize(1);
            assertThat(ctx.isDone()).isFalse();

            behind.set(false);
            assertThat(ctx.awaitEnd(Duration.ofSeconds(10))).isInstanceOf(Event.RunFinished.class);
            assertThat(ctx.text()).isEqualTo("One, two, three.");
        }
    }

    @Test
    void aRedirectIsNotFollowedAndTheErrorSaysWhereItPoints() {
        model.createContext("/old/v1/chat/completions", ex -> {
            try (ex) {
                ex.getRequestBody().readAllBytes();
                ex.getResponseHeaders().set("Location", "/v1/chat/completions");
                ex.sendResponseHeaders(307, -1);
            }
        });
        try (AgentRuntime openai = runtime("http://127.0.0.1:" + model.getAddress().getPort() + "/old/v1")) {
            RecordingRunContext ctx = new RecordingRunContext().home(loops.next());
            openai.start(request("run-1"), ctx);

            assertThat(ctx.awaitEnd(Duration.ofSeconds(10))).isInstanceOfSatisfying(Event.RunFailed.class, f -> {
                assertThat(f.code()).isEqualTo(ErrorCode.UPSTREAM_FAILED);
                assertThat(f.message()).contains("answered HTTP 307 to POST http://127.0.0.1:")
                        .endsWith("(a redirect to /v1/chat/completions; set the URL to where it points)");
            });
        }
        assertThat(callers).as("the redirect was not followed").isEmpty();
    }

    @Test
    void anErrorBodyCutInsideACharacterByItsChunksReadsWhole() {
        model.createContext("/busy/v1/chat/completions", ex -> {
            try (ex) {
                ex.getRequestBody().readAllBytes();
                byte[] body = "{\"error\":{\"message\":\"überlastet\"}}".getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().set("Content-Type", "application/json");
                ex.sendResponseHeaders(503, 0);
                int split = 22; // inside "ü", which is two bytes
                ex.getResponseBody().write(body, 0, split);
                ex.getResponseBody().flush();
                ex.getResponseBody().write(body, split, body.length - split);
            }
        });
        try (AgentRuntime openai = runtime("http://127.0.0.1:" + model.getAddress().getPort() + "/busy/v1")) {
            RecordingRunContext ctx = new RecordingRunContext().home(loops.next());
            openai.start(request("run-1"), ctx);

            assertThat(ctx.awaitEnd(Duration.ofSeconds(10))).isInstanceOfSatisfying(Event.RunFailed.class,
                    f -> assertThat(f.message()).endsWith("answered HTTP 503 to POST http://127.0.0.1:"
                            + model.getAddress().getPort() + "/busy/v1/chat/completions: überlastet"));
        }
    }

    @Test
    void aModelAtAnAddressThatRefusesIsAClearErrorAndTheHistoryIsReadOnTheStartingThread() {
        // Nothing listens on port 1: the connection is refused.
        try (AgentRuntime openai = runtime("http://127.0.0.1:1/v1")) {
            RecordingRunContext ctx = new RecordingRunContext();
            openai.start(request("run-1"), ctx);
            assertThat(ctx.historyReader()).as("read before start returned, on this thread")
                    .isSameAs(Thread.currentThread());
            Event end = ctx.awaitEnd(Duration.ofSeconds(10));
            assertThat(end).isInstanceOfSatisfying(Event.RunFailed.class, f -> {
                assertThat(f.code()).isEqualTo(ErrorCode.UPSTREAM_FAILED);
                assertThat(f.message()).startsWith("cannot connect to the model server at http://127.0.0.1:1/v1/chat/completions");
            });
        }
    }

    @Test
    void aHostNameThatIsNotFoundIsAClearError() {
        EventLoop home = loops.next();
        try (AgentRuntime openai = runtime("http://model.invalid:1/v1")) {
            RecordingRunContext ctx = new RecordingRunContext().home(home);
            openai.start(request("run-1"), ctx);
            // The name is never found (.invalid), or the lookup outlasts the 5 s timeout: the run fails either way.
            Event end = ctx.awaitEnd(Duration.ofSeconds(30));
            assertThat(end).isInstanceOfSatisfying(Event.RunFailed.class, f -> {
                assertThat(f.code()).isEqualTo(ErrorCode.UPSTREAM_FAILED);
                assertThat(f.message()).containsAnyOf("cannot find the host model.invalid of the model server",
                        "did not answer within 5 s");
            });
        }
    }

    private static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited 10 s").isLessThan(deadline);
            Thread.sleep(10);
        }
    }
}
