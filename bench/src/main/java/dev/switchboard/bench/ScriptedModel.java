package dev.switchboard.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.LockSupport;

/**
 * A scripted OpenAI-compatible model server on loopback: every {@code POST /v1/chat/completions}
 * with {@code "stream":true} is answered as the Chat Completions API streams (a role chunk, one
 * content chunk per token, a finish chunk, a usage chunk, {@code data: [DONE]}), as fast as it can
 * or at a set pace. Each token's text is the time it was written ({@link #now()}, decimal
 * nanoseconds) and a space, so a reader in this process, direct or through the gateway, can tell
 * how long the token took to reach it.
 */
public final class ScriptedModel implements AutoCloseable {
    /** The model name the server reports; the gateway is started with {@code --model scripted}. */
    public static final String MODEL = "scripted";
    private static final long ORIGIN = System.nanoTime();
    private static final String CHUNK = "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\","
            + "\"created\":1705318200,\"model\":\"" + MODEL + "\",";
    private static final byte[] ROLE = (CHUNK + "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
            + "\"content\":\"\"},\"finish_reason\":null}]}\n\n").getBytes(StandardCharsets.US_ASCII);
    private static final String TOKEN_BEFORE = CHUNK + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"";
    private static final String TOKEN_AFTER = " \"},\"finish_reason\":null}]}\n\n";
    private static final byte[] FINISH = (CHUNK + "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
            .getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final int PROMPT_TOKENS = 12;

    private final HttpServer server;
    private final ExecutorService executor;
    private volatile int tokens;
    private volatile long gapNanos;
    /** Whether each answer ends its connection ({@code Connection: close}), as a server with a short keep-alive does. */
    private volatile boolean closeEach;
    /** The body of the last request it was sent. */
    private volatile String lastRequest;

    static {
        // The JDK's server leaves Nagle's algorithm on unless told; it would hold a token back until the
        // reader acknowledged the one before it.
        System.setProperty("sun.net.httpserver.nodelay", "true");
    }

    private ScriptedModel(int tokens) throws IOException {
        this.tokens = tokens;
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
        // A thread per stream: a paced stream sleeps between its tokens.
        executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "scripted-model");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/v1/chat/completions", this::chat);
        server.start();
    }

    /** Starts a server on a free loopback port that answers {@code tokens} tokens, unpaced. */
    public static ScriptedModel start(int tokens) throws IOException {
        return new ScriptedModel(tokens);
    }

    /**
     * This process's clock in nanoseconds, positive from the start of the class: the time written
     * into each token and the one its readers compare it with.
     */
    public static long now() {
        return System.nanoTime() - ORIGIN;
    }

    /** The send time a token's text carries, or -1 when the text is not a token of this server. */
    public static long sentAt(CharSequence text, int from) {
        long v = 0;
        int i = from;
        while (i < text.length() && text.charAt(i) >= '0' && text.charAt(i) <= '9') {
            v = v * 10 + (text.charAt(i) - '0');
            i++;
        }
        return i == from || i >= text.length() || text.charAt(i) != ' ' ? -1 : v;
    }

    /**
     * Whether from now on each answer closes its connection, so that its reader connects anew for
     * the next, as it does to a model server that drops idle connections soon (and as every
     * client does after a pause longer than the JDK server's idle limit, 30 s unless set).
     */
    public void closeAfterEachAnswer(boolean close) {
        this.closeEach = close;
    }

    /** Answers from now on with {@code tokens} tokens at {@code tokensPerSecond} (0: as fast as it can). */
    public void script(int tokens, double tokensPerSecond) {
        this.tokens = tokens;
        this.gapNanos = tokensPerSecond <= 0 ? 0 : (long) (1e9 / tokensPerSecond);
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** The body of the last request it was sent; null before the first. */
    public String lastRequest() {
        return lastRequest;
    }

    /** What the gateway's {@code --openai-base-url} is. */
    public String baseUrl() {
        return "http://127.0.0.1:" + port() + "/v1";
    }

    private void chat(HttpExchange ex) throws IOException {
        try (ex) {
            String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            lastRequest = body;
            if (!"POST".equals(ex.getRequestMethod()) || !body.contains("\"stream\":true")) {
                byte[] error = "{\"error\":{\"message\":\"only streamed chat completions are scripted\"}}"
                        .getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().set("Content-Type", "application/json");
                ex.sendResponseHeaders(400, error.length);
                ex.getResponseBody().write(error);
                return;
            }
            int n = tokens;
            long gap = gapNanos;
            ex.getResponseHeaders().set("Content-Type", "text/event-stream");
            ex.getResponseHeaders().set("Cache-Control", "no-cache");
            if (closeEach) {
                ex.getResponseHeaders().set("Connection", "close");
            }
            ex.sendResponseHeaders(200, 0);
            OutputStream out = ex.getResponseBody();
            write(out, ROLE);
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                if (gap > 0) {
                    long wait;
                    while ((wait = start + i * gap - System.nanoTime()) > 0) {
                        LockSupport.parkNanos(wait);
                    }
                }
                write(out, (TOKEN_BEFORE + now() + TOKEN_AFTER).getBytes(StandardCharsets.US_ASCII));
            }
            write(out, FINISH);
            write(out, usage(n));
            write(out, DONE);
            out.close();
        } catch (IOException clientLeft) {
            // The reader went away mid-stream; its side counts the error.
        }
    }

    /** The usage chunk that {@code stream_options.include_usage} asks for: no choices. */
    private static byte[] usage(int completion) {
        return (CHUNK + "\"choices\":[],\"usage\":{\"prompt_tokens\":" + PROMPT_TOKENS + ",\"completion_tokens\":"
                + completion + ",\"total_tokens\":" + (PROMPT_TOKENS + completion) + "}}\n\n")
                .getBytes(StandardCharsets.US_ASCII);
    }

    private static void write(OutputStream out, byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
