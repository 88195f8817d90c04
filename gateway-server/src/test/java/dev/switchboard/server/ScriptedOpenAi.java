package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.switchboard.core.Json;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * An OpenAI-compatible Chat Completions server on loopback that answers each request with the next
 * script, streamed as the real API streams ({@code data:} chunks, a usage chunk, {@code [DONE]}), and
 * HTTP tools beside it under {@code /tools/<name>}. It records what it was asked.
 */
final class ScriptedOpenAi implements AutoCloseable {
    static final String MODEL = "scripted-model";

    /** How to answer one chat completions request. */
    @FunctionalInterface
    interface Script {
        void answer(HttpExchange exchange, ScriptedOpenAi server) throws IOException, InterruptedException;
    }

    /** A tool call the model makes: its id, name and JSON arguments. */
    record Call(String id, String name, String arguments) {
    }

    /** The tokens one answer reports in its usage chunk. */
    record Tokens(int prompt, int completion) {
    }

    /** A tool endpoint's answer. */
    record ToolAnswer(int status, String body) {
    }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool();
    private final BlockingQueue<Script> scripts = new LinkedBlockingQueue<>();
    /** Bodies of the chat completions requests, in order. */
    final List<JsonNode> requests = new CopyOnWriteArrayList<>();
    final List<String> authorizations = new CopyOnWriteArrayList<>();
    /** The {@code traceparent} of each chat completions request and each tool request, in order ("null": none). */
    final List<String> traceparents = new CopyOnWriteArrayList<>();
    final List<String> toolTraceparents = new CopyOnWriteArrayList<>();
    /** Bodies each tool received, by tool name. */
    final Map<String, List<JsonNode>> toolRequests = new ConcurrentHashMap<>();
    private final Map<String, Function<JsonNode, ToolAnswer>> tools = new ConcurrentHashMap<>();
    /** Counted down when a client leaves a stream that {@link #streamUntilTheClientLeaves} holds open. */
    final CountDownLatch clientLeft = new CountDownLatch(1);
    /** Counted down when a held script has started to hold. */
    final CountDownLatch holding = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);

    private ScriptedOpenAi() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(executor);
        server.createContext("/v1/chat/completions", this::chat);
        server.createContext("/tools/", this::tool);
        server.start();
    }

    static ScriptedOpenAi start() {
        try {
            return new ScriptedOpenAi();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
    }

    String toolUrl(String name) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/tools/" + name;
    }

    /** Queues the answer to the next request. */
    ScriptedOpenAi then(Script script) {
        scripts.add(script);
        return this;
    }

    /** Serves a tool at {@link #toolUrl}. */
    ScriptedOpenAi tool(String name, Function<JsonNode, ToolAnswer> answer) {
        tools.put(name, answer);
        return this;
    }

    /** The messages of the request {@code i}. */
    JsonNode messages(int i) {
        return requests.get(i).get("messages");
    }

    private void chat(HttpExchange ex) throws IOException {
        try (ex) {
            requests.add(Json.MAPPER.readTree(ex.getRequestBody()));
            authorizations.add(String.valueOf(ex.getRequestHeaders().getFirst("Authorization")));
            traceparents.add(String.valueOf(ex.getRequestHeaders().getFirst("traceparent")));
            Script script = scripts.poll();
            if (script == null) {
                respond(ex, 500, "application/json", "{\"error\":{\"message\":\"the script has no more answers\"}}");
                return;
            }
            script.answer(ex, this);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void tool(HttpExchange ex) throws IOException {
        try (ex) {
            String name = ex.getRequestURI().getPath().substring("/tools/".length());
            JsonNode body = Json.MAPPER.readTree(ex.getRequestBody());
            toolRequests.computeIfAbsent(name, k -> new CopyOnWriteArrayList<>()).add(body);
            toolTraceparents.add(String.valueOf(ex.getRequestHeaders().getFirst("traceparent")));
            Function<JsonNode, ToolAnswer> answer = tools.get(name);
            ToolAnswer a = answer == null ? new ToolAnswer(404, "no tool " + name) : answer.apply(body);
            respond(ex, a.status(), "text/plain", a.body());
        }
    }

    static void respond(HttpExchange ex, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        if (bytes.length > 0) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    // ---- scripts ------------------------------------------------------------------------------

    private static ObjectNode chunk() {
        ObjectNode c = Json.object().put("id", "chatcmpl-1").put("object", "chat.completion.chunk")
                .put("created", 1_705_318_200L).put("model", MODEL);
        c.putArray("choices");
        return c;
    }

    private static ObjectNode delta(ObjectNode chunk) {
        ObjectNode choice = ((ArrayNode) chunk.get("choices")).addObject().put("index", 0);
        choice.putNull("finish_reason");
        return choice.putObject("delta");
    }

    private static String finish(String reason) {
        ObjectNode c = chunk();
        ObjectNode choice = ((ArrayNode) c.get("choices")).addObject().put("index", 0);
        choice.putObject("delta");
        choice.put("finish_reason", reason);
        return c.toString();
    }

    /**
     * The usage chunk that {@code stream_options.include_usage} asks for: no choices, and, as vLLM,
     * Ollama and llama.cpp send it, no {@code *_tokens_details}.
     */
    static String usage(Tokens tokens) {
        ObjectNode c = chunk();
        c.putObject("usage").put("prompt_tokens", tokens.prompt()).put("completion_tokens", tokens.completion())
                .put("total_tokens", tokens.prompt() + tokens.completion());
        return c.toString();
    }

    /** Starts an event stream and returns a writer of its {@code data:} events. */
    static Sse stream(HttpExchange ex) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "text/event-stream");
        ex.sendResponseHeaders(200, 0);
        return new Sse(ex.getResponseBody());
    }

    /** Writes events of a stream, flushing each. */
    static final class Sse {
        private final OutputStream out;

        Sse(OutputStream out) {
            this.out = out;
        }

        Sse data(String data) throws IOException {
            return raw("data: " + data + "\n\n");
        }

        Sse raw(String text) throws IOException {
            out.write(text.getBytes(StandardCharsets.UTF_8));
            out.flush();
            return this;
        }
    }

    /** Text streamed in these pieces, then stop, usage and [DONE]. */
    static Script text(String... pieces) {
        return text(new Tokens(42, pieces.length), pieces);
    }

    /** Text streamed in these pieces, then stop, a usage of these tokens and [DONE]. */
    static Script text(Tokens tokens, String... pieces) {
        return (ex, s) -> {
            Sse sse = stream(ex);
            ObjectNode first = chunk();
            delta(first).put("role", "assistant").put("content", "");
            sse.data(first.toString());
            for (String p : pieces) {
                ObjectNode c = chunk();
                delta(c).put("content", p);
                sse.data(c.toString());
            }
            sse.data(finish("stop")).data(usage(tokens)).data("[DONE]");
        };
    }

    /** Text streamed in these pieces, {@code gapMs} apart, as a slow model writes it. */
    static Script slowText(long gapMs, String... pieces) {
        return (ex, s) -> {
            Sse sse = stream(ex);
            for (String p : pieces) {
                Thread.sleep(gapMs);
                ObjectNode c = chunk();
                delta(c).put("content", p);
                sse.data(c.toString());
            }
            sse.data(finish("stop")).data(usage(new Tokens(42, pieces.length))).data("[DONE]");
        };
    }

    /**
     * Tool calls as the API streams them: each call opens with its id and name, then its arguments
     * arrive in two pieces, the calls' pieces interleaved; then tool_calls, usage and [DONE].
     */
    static Script toolCalls(Call... calls) {
        return toolCalls(new Tokens(50, 10), calls);
    }

    /** Tool calls as {@link #toolCalls(Call...)} streams them, with a usage of these tokens. */
    static Script toolCalls(Tokens tokens, Call... calls) {
        return (ex, s) -> {
            Sse sse = stream(ex);
            for (int i = 0; i < calls.length; i++) {
                ObjectNode c = chunk();
                ObjectNode fragment = delta(c).putArray("tool_calls").addObject().put("index", i)
                        .put("id", calls[i].id()).put("type", "function");
                fragment.putObject("function").put("name", calls[i].name()).put("arguments", "");
                sse.data(c.toString());
            }
            for (int half = 0; half < 2; half++) {
                for (int i = 0; i < calls.length; i++) {
                    String args = calls[i].arguments();
                    int cut = args.length() / 2;
                    ObjectNode c = chunk();
                    delta(c).putArray("tool_calls").addObject().put("index", i).putObject("function")
                            .put("arguments", half == 0 ? args.substring(0, cut) : args.substring(cut));
                    sse.data(c.toString());
                }
            }
            sse.data(finish("tool_calls")).data(usage(tokens)).data("[DONE]");
        };
    }

    /** An HTTP error with this body. */
    static Script status(int status, String body) {
        return (ex, s) -> respond(ex, status, "application/json", body);
    }

    /** A 200 event stream of exactly this text. */
    static Script raw(String text) {
        return (ex, s) -> stream(ex).raw(text);
    }

    /** Headers and one piece of text, then silence until the client gives up. */
    static Script stallAfter(String piece) {
        return (ex, s) -> {
            Sse sse = stream(ex);
            ObjectNode c = chunk();
            delta(c).put("content", piece);
            sse.data(c.toString());
            s.holding.countDown();
            s.released.await(30, TimeUnit.SECONDS);
        };
    }

    /** No answer at all until the client gives up. */
    static Script noAnswer() {
        return (ex, s) -> {
            s.holding.countDown();
            s.released.await(30, TimeUnit.SECONDS);
        };
    }

    /**
     * One piece of text, then a keep-alive comment every 20 ms until writing fails because the
     * client has left, which counts down {@link #clientLeft}.
     */
    static Script streamUntilTheClientLeaves(String piece) {
        return (ex, s) -> {
            Sse sse = stream(ex);
            ObjectNode c = chunk();
            delta(c).put("content", piece);
            sse.data(c.toString());
            s.holding.countDown();
            try {
                while (s.released.getCount() > 0) {
                    sse.raw(": keep-alive\n\n");
                    Thread.sleep(20);
                }
            } catch (IOException gone) {
                s.clientLeft.countDown();
            }
        };
    }

    /** Every request body's messages, for failure messages. */
    @Override
    public String toString() {
        List<String> out = new ArrayList<>();
        requests.forEach(r -> out.add(r.get("messages").toString()));
        return String.join("\n", out);
    }

    @Override
    public void close() {
        released.countDown();
        server.stop(0);
        executor.shutdownNow();
    }
}
