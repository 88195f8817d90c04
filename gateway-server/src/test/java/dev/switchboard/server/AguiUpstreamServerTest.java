package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.switchboard.core.Command;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Json;
import dev.switchboard.core.Principal;
import dev.switchboard.core.Subscriber;
import dev.switchboard.server.GatewayConfig.Option;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code agui} runtime against a scripted AG-UI agent on loopback: what it sends upstream, the
 * event types the demo never sends (reasoning, chunks, usage), interrupts of another agent, and
 * upstream failures.
 */
class AguiUpstreamServerTest {
    @TempDir
    Path dataDir;
    private final Agent agent = new Agent();
    private TestGateway gateway;

    @AfterEach
    void stop() {
        if (gateway != null) {
            gateway.close();
        }
        agent.close();
    }

    private TestGateway gateway(Map<String, Object> extra) {
        Map<String, Object> options = new HashMap<>(Map.of("runtime", "agui", "agui-upstream-url", agent.url(),
                "upstream-timeout-seconds", 5));
        options.putAll(extra);
        gateway = TestGateway.start(dataDir, options);
        return gateway;
    }

    /** An AG-UI agent on loopback that answers each run with the next scripted stream and records what it got. */
    static final class Agent implements AutoCloseable {
        record Request(JsonNode body, Map<String, List<String>> headers) {
        }

        private final HttpServer server;
        private final ExecutorService executor = Executors.newCachedThreadPool();
        private final BlockingQueue<String> streams = new LinkedBlockingQueue<>();
        final BlockingQueue<Request> requests = new LinkedBlockingQueue<>();

        Agent() {
            try {
                server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
            server.setExecutor(executor);
            server.createContext("/agent", this::answer);
            server.start();
        }

        String url() {
            return "http://127.0.0.1:" + server.getAddress().getPort() + "/agent";
        }

        /** Queues a stream: one event a line, each written as {@code data: <line>} and a blank line. */
        Agent then(String events) {
            streams.add(events);
            return this;
        }

        Request next() throws InterruptedException {
            Request r = requests.poll(10, TimeUnit.SECONDS);
            assertThat(r).as("a request reached the agent").isNotNull();
            return r;
        }

        private void answer(HttpExchange ex) throws IOException {
            try (ex) {
                requests.add(new Request(Json.MAPPER.readTree(ex.getRequestBody()), Map.copyOf(ex.getRequestHeaders())));
                String script = streams.poll();
                if (script == null || script.startsWith("HTTP ")) {
                    int status = script == null ? 500 : Integer.parseInt(script.substring(5, 8));
                    byte[] body = (script == null ? "{\"error\":{\"message\":\"no script\"}}" : script.substring(9))
                            .getBytes(StandardCharsets.UTF_8);
                    ex.getResponseHeaders().set("Content-Type", "application/json");
                    ex.sendResponseHeaders(status, body.length);
                    ex.getResponseBody().write(body);
                    return;
                }
                ex.getResponseHeaders().set("Content-Type", "text/event-stream");
                ex.sendResponseHeaders(200, 0);
                OutputStream out = ex.getResponseBody();
                for (String line : script.strip().split("\n")) {
                    out.write(("data: " + line.strip() + "\n\n").getBytes(StandardCharsets.UTF_8));
                    out.flush();
                }
            }
        }

        @Override
        public void close() {
            server.stop(0);
            executor.shutdownNow();
        }
    }

    private static JsonNode json(String text) {
        try {
            return Json.MAPPER.readTree(text);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static final String THINK_THEN_ANSWER = """
            {"type":"RUN_STARTED","threadId":"t","runId":"r"}
            {"type":"REASONING_START","messageId":"span-1"}
            {"type":"REASONING_MESSAGE_START","messageId":"r-1","role":"reasoning"}
            {"type":"REASONING_MESSAGE_CONTENT","messageId":"r-1","delta":"They want the rule."}
            {"type":"REASONING_MESSAGE_END","messageId":"r-1"}
            {"type":"REASONING_END","messageId":"span-1"}
            {"type":"TEXT_MESSAGE_CHUNK","messageId":"m-1","role":"assistant","delta":"Keep it "}
            {"type":"TEXT_MESSAGE_CHUNK","delta":"below 8 °C."}
            {"type":"RUN_FINISHED","threadId":"t","runId":"r","usage":[{"model":"upstream-model","inputTokens":30,"outputTokens":6,"totalTokens":36}]}
            """;

    @Test
    void theRunAgentInputCarriesTheThreadMessagesToolsContextStateHeadersAndTheClientsToken() throws Exception {
        agent.then(THINK_THEN_ANSWER);
        int port = gateway(Map.of("agui-upstream-header", "X-Tenant: acme", "agui-forward-token", true)).port();
        String thread = UUID.randomUUID().toString();
        ObjectNode input = AguiHttp.input(thread, "How cold?");
        input.putArray("tools").addObject().put("name", "show_map").put("description", "Shows a map")
                .putObject("parameters").put("type", "object");
        input.putArray("context").addObject().put("description", "page").put("value", "checkout");
        input.putObject("state").put("step", 2);
        input.putObject("forwardedProps").put("locale", "nb");

        AguiHttp.run(port, input, "Authorization", "Bearer client-token");

        Agent.Request got = agent.next();
        JsonNode body = got.body();
        assertThat(body.path("threadId").asText()).isEqualTo(thread);
        assertThat(body.path("runId").asText()).isEqualTo(input.path("runId").asText());
        assertThat(body.get("messages")).isEqualTo(input.get("messages"));
        assertThat(body.get("tools")).isEqualTo(input.get("tools"));
        assertThat(body.get("context")).isEqualTo(input.get("context"));
        assertThat(body.get("state")).isEqualTo(input.get("state"));
        assertThat(body.get("forwardedProps")).isEqualTo(input.get("forwardedProps"));
        assertThat(body.has("resume")).isFalse();
        assertThat(got.headers().get("X-tenant")).containsExactly("acme");
        assertThat(got.headers().get("Authorization")).containsExactly("Bearer client-token");
        assertThat(got.headers().get("Accept")).containsExactly("text/event-stream");
    }

    @Test
    void withAuthenticationOnTheVerifiedTokenIsForwarded() throws Exception {
        agent.then(THINK_THEN_ANSWER);
        String token = AuthServerTest.hs256("alice", java.time.Instant.now().plusSeconds(600));
        int port = gateway(Map.of("agui-forward-token", true, "jwt-secret", AuthServerTest.SECRET)).port();

        AguiHttp.run(port, AguiHttp.input(UUID.randomUUID().toString(), "How cold?"), "Authorization", "Bearer " + token);

        assertThat(agent.next().headers().get("Authorization")).containsExactly("Bearer " + token);
    }

    @Test
    void withoutForwardingTheClientsTokenStaysHere() throws Exception {
        agent.then(THINK_THEN_ANSWER);

        AguiHttp.run(gateway(Map.of()).port(), AguiHttp.input(UUID.randomUUID().toString(), "How cold?"),
                "Authorization", "Bearer client-token");

        assertThat(agent.next().headers()).doesNotContainKey("Authorization");
    }

    @Test
    void reasoningChunksAndUsageOfTheAgentReachAguiClients() {
        agent.then(THINK_THEN_ANSWER);

        List<JsonNode> events = AguiHttp.run(gateway(Map.of()).port(), AguiHttp.input(UUID.randomUUID().toString(), "?"));

        assertThat(AguiHttp.types(events)).containsExactly("RUN_STARTED", "REASONING_START", "REASONING_MESSAGE_START",
                "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "REASONING_END", "TEXT_MESSAGE_START",
                "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED");
        assertThat(AguiHttp.first(events, "REASONING_MESSAGE_CONTENT").path("delta").asText())
                .isEqualTo("They want the rule.");
        assertThat(AguiHttp.text(events)).isEqualTo("Keep it below 8 °C.");
        assertThat(AguiHttp.last(events).get("usage")).isEqualTo(json("""
                [{"model":"upstream-model","inputTokens":30,"outputTokens":6,"totalTokens":36}]"""));
    }

    @Test
    void reasoningIsTheThinkingStatusOnHai() {
        agent.then(THINK_THEN_ANSWER);
        try (WsClient c = gateway(Map.of()).connect("/ws")) {
            List<JsonNode> frames = c.ask("s-think", "How cold?").untilCompleted();

            assertThat(frames).extracting(f -> f.path("type").asText() + ":" + f.path("status").asText()
                    + f.path("content").asText()).containsExactly("status:thinking", "assistant_message_chunk:Keep it ",
                    "assistant_message_chunk:below 8 °C.", "assistant_message_chunk:", "status:completed");
        }
    }

    @Test
    void anotherAgentsInterruptsAreAskedInTurnAndTheirDecisionsResumeIt() throws Exception {
        agent.then("""
                {"type":"RUN_STARTED","threadId":"t","runId":"r"}
                {"type":"TOOL_CALL_START","toolCallId":"c-del","toolCallName":"delete_records"}
                {"type":"TOOL_CALL_ARGS","toolCallId":"c-del","delta":"{\\"before\\":\\"2020\\"}"}
                {"type":"TOOL_CALL_END","toolCallId":"c-del"}
                {"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"int-1","reason":"confirm","toolCallId":"c-del","message":"Delete old records?"},{"id":"int-2","reason":"budget_approval","metadata":{"riskLevel":"medium"}}]}}
                """).then("""
                {"type":"RUN_STARTED","threadId":"t","runId":"r2"}
                {"type":"TOOL_CALL_RESULT","messageId":"res-1","toolCallId":"c-del","content":"deleted 12"}
                {"type":"TEXT_MESSAGE_START","messageId":"m-2"}
                {"type":"TEXT_MESSAGE_CONTENT","messageId":"m-2","delta":"Done."}
                {"type":"TEXT_MESSAGE_END","messageId":"m-2"}
                {"type":"RUN_FINISHED","threadId":"t","runId":"r2"}
                """);
        try (WsClient c = gateway(Map.of()).connect("/ws")) {
            List<JsonNode> first = c.ask("s-interrupts", "Clean up")
                    .until(f -> f.path("type").asText().equals("tool_approval_request"));
            JsonNode delete = first.get(first.size() - 1);
            assertThat(delete.path("tool_name").asText()).isEqualTo("delete_records");
            assertThat(delete.path("tool_description").asText()).isEqualTo("Delete old records?");
            assertThat(delete.path("parameters")).isEqualTo(json("{\"before\":\"2020\"}"));
            assertThat(delete.path("risk_level").asText()).isEqualTo("high");
            c.send(Json.object().put("type", "tool_approval_response").put("approval_id",
                    delete.path("approval_id").asText()).put("approved", true).toString());

            List<JsonNode> second = c.until(f -> f.path("type").asText().equals("tool_approval_request"));
            JsonNode budget = second.get(second.size() - 1);
            assertThat(budget.path("tool_name").asText()).isEqualTo("budget_approval");
            assertThat(budget.path("risk_level").asText()).isEqualTo("medium");
            c.send(Json.object().put("type", "tool_approval_response").put("approval_id",
                    budget.path("approval_id").asText()).put("approved", false).put("feedback", "Too much").toString());

            List<JsonNode> rest = c.untilCompleted();
            assertThat(rest).filteredOn(f -> f.path("type").asText().equals("tool_call"))
                    .extracting(f -> f.path("status").asText() + ":" + f.path("result").asText())
                    .containsExactly("completed:deleted 12");
            assertThat(rest).extracting(f -> f.path("content").asText()).contains("Done.");
        }
        agent.next();
        JsonNode resume = agent.next().body();
        assertThat(resume.get("resume")).isEqualTo(json("""
                [{"interruptId":"int-1","status":"resolved","payload":{"approved":true}},
                 {"interruptId":"int-2","status":"resolved","payload":{"approved":false,"feedback":"Too much"}}]"""));
        assertThat(resume.path("threadId").asText()).isEqualTo("s-interrupts");
        assertThat(resume.get("messages")).extracting(m -> m.path("id").asText()).contains("c-del");
    }

    @Test
    void aRunEndedWhileItWaitsForADecisionCancelsTheAgentsInterrupts() throws Exception {
        agent.then("""
                {"type":"RUN_STARTED","threadId":"t","runId":"r"}
                {"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"int-9","reason":"confirm"}]}}
                """).then("""
                {"type":"RUN_STARTED","threadId":"t","runId":"r2"}
                {"type":"RUN_FINISHED","threadId":"t","runId":"r2"}
                """);
        TestGateway g = gateway(Map.of());
        try (WsClient c = g.connect("/ws")) {
            c.ask("s-abandon", "Do it").until(f -> f.path("type").asText().equals("tool_approval_request"));

            g.server.hub().submit(new Command.CancelRun("s-abandon", null), new Subscriber() {
                public Principal principal() {
                    return Principal.ANONYMOUS;
                }

                public boolean answersApprovals() {
                    return false;
                }

                public boolean deliver(Envelope envelope) {
                    return true;
                }

                public void overflowed() {
                }

                public void reject(GatewayError error) {
                    throw new AssertionError(error.message());
                }
            });
            assertThat(c.untilCompleted()).extracting(f -> f.path("error_code").asText()).contains("run_cancelled");
        }
        agent.next();
        assertThat(agent.next().body().get("resume")).isEqualTo(json("""
                [{"interruptId":"int-9","status":"cancelled"}]"""));
    }

    @Test
    void anAgentThatRefusesTheCallIsAnUpstreamErrorWithAHint() {
        agent.then("HTTP 401 {\"error\":{\"code\":\"auth_failed\",\"message\":\"the token has expired\"}}");
        try (WsClient c = gateway(Map.of()).connect("/ws")) {
            JsonNode error = c.ask("s-401", "Hi").until(f -> f.path("type").asText().equals("error")).stream()
                    .reduce((x, y) -> y).orElseThrow();

            assertThat(error.path("error_code").asText()).isEqualTo("upstream_error");
            assertThat(error.path("message").asText()).isEqualTo("the AG-UI agent at " + agent.url()
                    + " answered HTTP 401 to POST " + agent.url()
                    + ": the token has expired (check --agui-upstream-header and --agui-forward-token)");
        }
    }

    @Test
    void aStreamThatEndsBeforeTheRunDoesIsAnUpstreamError() {
        agent.then("""
                {"type":"RUN_STARTED","threadId":"t","runId":"r"}
                {"type":"TEXT_MESSAGE_START","messageId":"m"}
                """);
        try (WsClient c = gateway(Map.of()).connect("/ws")) {
            JsonNode error = c.ask("s-cut", "Hi").until(f -> f.path("type").asText().equals("error")).stream()
                    .reduce((x, y) -> y).orElseThrow();

            assertThat(error.path("message").asText()).isEqualTo("the AG-UI agent at " + agent.url()
                    + " ended its stream without RUN_FINISHED or RUN_ERROR");
        }
    }

    @Test
    void anEventThatBreaksTheProtocolIsAnUpstreamErrorSayingWhy() {
        agent.then("""
                {"type":"RUN_STARTED","threadId":"t","runId":"r"}
                {"type":"TOOL_CALL_START","toolCallId":"c"}
                """);
        try (WsClient c = gateway(Map.of()).connect("/ws")) {
            JsonNode error = c.ask("s-bad", "Hi").until(f -> f.path("type").asText().equals("error")).stream()
                    .reduce((x, y) -> y).orElseThrow();

            assertThat(error.path("error_code").asText()).isEqualTo("upstream_error");
            assertThat(error.path("message").asText()).startsWith("the AG-UI agent sent TOOL_CALL_START without toolCallName");
        }
    }
}
