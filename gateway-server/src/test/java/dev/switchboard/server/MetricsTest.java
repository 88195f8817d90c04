package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code GET /metrics}: runs in two dialects and two transports, a failure, a refusal and a resume,
 * over real sockets, then the scrape's values (docs/observability.md).
 */
class MetricsTest {
    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension();

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*})? (\\S+)$");

    private static HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Every sample of the scrape: name and labels as written ({@code name{a="b"}}) to value. */
    private static Map<String, Double> samples(String text) {
        Map<String, Double> out = new HashMap<>();
        for (String line : text.split("\n")) {
            Matcher m = SAMPLE.matcher(line);
            if (!line.startsWith("#") && m.matches()) {
                out.put(m.group(1) + (m.group(2) == null ? "" : m.group(2)), Double.parseDouble(m.group(3)));
            }
        }
        return out;
    }

    /** The sum of the samples of {@code name} whose labels include every one of {@code labels}. */
    private static double sum(Map<String, Double> samples, String name, String... labels) {
        return samples.entrySet().stream()
                .filter(e -> e.getKey().equals(name) || e.getKey().startsWith(name + "{"))
                .filter(e -> List.of(labels).stream().allMatch(l -> e.getKey().contains(l)))
                .mapToDouble(Map.Entry::getValue).sum();
    }

    private static long lastSeq(List<JsonNode> frames) {
        return frames.stream().filter(f -> f.has("seq")).mapToLong(f -> f.path("seq").asLong()).max().orElseThrow();
    }

    @Test
    void aScrapeCountsRunsEventsConnectionsRefusalsAndResumesByDialectWithoutAConversationsIds() throws Exception {
        Map<String, Double> before = samples(get(gateway.port(), "/metrics").body());
        String hai = UUID.randomUUID().toString();
        String thread = UUID.randomUUID().toString();
        long cursor;
        try (WsClient c = gateway.connect("/hai/ws")) {
            cursor = lastSeq(c.ask(hai, "hello").untilCompleted());
            c.ask(hai, "please crash").untilCompleted();
            c.send("{\"type\":\"no_such_type\"}");
            assertThat(c.next().path("type").asText()).isEqualTo("error");
        }
        List<JsonNode> agui = AguiHttp.run(gateway.port(), AguiHttp.input(thread, "hello"));
        assertThat(AguiHttp.types(agui)).contains("RUN_FINISHED");
        try (WsClient c = gateway.connect("/agui/ws")) {
            c.send(AguiHttp.input(UUID.randomUUID().toString(), "hello").toString())
                    .until(e -> e.path("type").asText().equals("RUN_FINISHED"));
        }
        try (WsClient c = gateway.connect("/api/realtime/ws?conversationId=" + UUID.randomUUID())) {
            c.next();
            c.send(dev.switchboard.core.Json.object().put("type", "message").put("content", "hello").toString())
                    .until(f -> f.path("type").asText().equals("message_complete"));
        }
        HttpResponse<String> agentScope = HTTP.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + gateway.port() + "/process"))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(20))
                .POST(HttpRequest.BodyPublishers.ofString(AgentScopeServerTest.request(UUID.randomUUID().toString(),
                        "hello").toString())).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(agentScope.statusCode()).isEqualTo(200);
        long newest;
        gateway.server().hub().flushed().get();
        try (WsClient back = gateway.connect("/hai/ws?session_id=" + hai + "&last_seq=" + cursor)) {
            // The run it missed is stored: read from the store.
            List<JsonNode> missed = back.untilCompleted();
            assertThat(missed).isNotEmpty();
            newest = lastSeq(missed);
        }
        try (WsClient again = gateway.connect("/hai/ws?session_id=" + hai + "&last_seq=" + newest)) {
            // Nothing missed: answered from memory. The run asked after it shows the resume was handled.
            again.ask(hai, "hello").untilCompleted();
        }
        HttpResponse<String> refused = HTTP.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + gateway.port() + "/agui"))
                .POST(HttpRequest.BodyPublishers.ofString("{not json")).header("Content-Type", "application/json")
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).isBetween(400, 499);
        gateway.server().hub().flushed().get();

        HttpResponse<String> scrape = get(gateway.port(), "/metrics");
        assertThat(scrape.statusCode()).isEqualTo(200);
        assertThat(scrape.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
        String text = scrape.body();
        Map<String, Double> after = samples(text);

        assertThat(sum(after, "switchboard_runs_started_total") - sum(before, "switchboard_runs_started_total"))
                .isGreaterThanOrEqualTo(6);
        for (String[] dt : new String[][] {{"hai", "websocket"}, {"agui", "sse"}, {"agui", "websocket"},
                {"voiceassist", "websocket"}, {"agentscope", "sse"}}) {
            assertThat(sum(after, "switchboard_connections_accepted_total", "dialect=\"" + dt[0] + "\"",
                    "transport=\"" + dt[1] + "\"")).as(dt[0] + " over " + dt[1]).isGreaterThanOrEqualTo(1);
            assertThat(sum(after, "switchboard_events_delivered_total", "dialect=\"" + dt[0] + "\""))
                    .as(dt[0]).isGreaterThan(2);
        }
        assertThat(sum(after, "switchboard_runs_ended_total", "outcome=\"finished\"")
                - sum(before, "switchboard_runs_ended_total", "outcome=\"finished\"")).isGreaterThanOrEqualTo(5);
        assertThat(sum(after, "switchboard_runs_ended_total", "error_code=\"internal_error\"")
                - sum(before, "switchboard_runs_ended_total", "error_code=\"internal_error\"")).isEqualTo(1);
        assertThat(sum(after, "switchboard_runs_active")).isZero();
        assertThat(sum(after, "switchboard_run_duration_seconds_count", "outcome=\"failed\"")).isGreaterThanOrEqualTo(1);
        assertThat(sum(after, "switchboard_run_first_event_seconds_count")).isGreaterThanOrEqualTo(6);

        double haiEvents = sum(after, "switchboard_events_delivered_total", "dialect=\"hai\"");
        assertThat(haiEvents).isGreaterThan(10);
        assertThat(sum(after, "switchboard_sent_bytes_total", "dialect=\"hai\"")).isGreaterThan(haiEvents * 20);
        assertThat(sum(after, "switchboard_events_delivered_total", "dialect=\"agui\"")).isGreaterThan(3);
        assertThat(sum(after, "switchboard_connections_accepted_total", "dialect=\"hai\"", "transport=\"websocket\""))
                .isGreaterThanOrEqualTo(2);
        assertThat(sum(after, "switchboard_connections_accepted_total", "dialect=\"agui\"", "transport=\"sse\""))
                .isGreaterThanOrEqualTo(1);
        assertThat(sum(after, "switchboard_connections_closed_total", "dialect=\"agui\"", "reason=\"end\""))
                .isGreaterThanOrEqualTo(1);
        assertThat(sum(after, "switchboard_requests_refused_total", "reason=\"invalid_input\"")
                - sum(before, "switchboard_requests_refused_total", "reason=\"invalid_input\"")).isEqualTo(2);
        assertThat(sum(after, "switchboard_resumes_total", "outcome=\"store\"")
                - sum(before, "switchboard_resumes_total", "outcome=\"store\"")).isGreaterThanOrEqualTo(1);
        assertThat(sum(after, "switchboard_resumes_total", "outcome=\"memory\"")
                - sum(before, "switchboard_resumes_total", "outcome=\"memory\"")).isGreaterThanOrEqualTo(1);
        assertThat(sum(after, "switchboard_resume_replayed_events_count")).isGreaterThanOrEqualTo(1);
        assertThat(sum(after, "switchboard_store_write_seconds_count")).isGreaterThan(0);
        assertThat(sum(after, "switchboard_build_info")).isEqualTo(1);
        assertThat(sum(after, "jvm_memory_used_bytes")).isGreaterThan(0);
        assertThat(text).contains("netty_allocator_memory_used");
        // The allocator the meters read is the one the server's channels take their buffers from.
        assertThat(sum(after, "netty_allocator_memory_used", "memory_type=\"direct\"")).isGreaterThan(0);
        // Bounded cardinality: no label carries what a client chose.
        assertThat(text).doesNotContain(hai).doesNotContain(thread);
        // The dashboard's panels read meters the gateway has (decisions and the runtimes' with the openai run).
        assertThat(dashboardMetrics("switchboard_")).isNotEmpty()
                .filteredOn(name -> !name.equals("switchboard_approval_decision_seconds"))
                .allSatisfy(name -> assertThat(after.keySet())
                .as("docs/grafana-dashboard.json reads " + name).anyMatch(k -> k.startsWith(name)));
    }

    /**
     * The metrics the Grafana dashboard under docs/ reads whose names start with {@code prefix},
     * without their histogram suffixes; the AG-UI runtime's are left out (registered by its first call).
     */
    private static List<String> dashboardMetrics(String prefix) throws IOException {
        JsonNode dashboard = dev.switchboard.core.Json.MAPPER.readTree(
                java.nio.file.Files.readString(Path.of("..", "docs", "grafana-dashboard.json")));
        java.util.Set<String> names = new java.util.TreeSet<>();
        for (JsonNode expr : dashboard.findValues("expr")) {
            // Label names (in by (...) and {...} selectors) are no metrics.
            String metricsOnly = expr.asText().replaceAll("by \\([^)]*\\)", "").replaceAll("\\{[^}]*}", "");
            Matcher m = Pattern.compile("\\b" + prefix + "[a-z_]+").matcher(metricsOnly);
            while (m.find()) {
                names.add(m.group().replaceAll("_(bucket|sum|count)$", ""));
            }
        }
        names.remove("switchboard_upstream_duration_seconds");
        return List.copyOf(names);
    }

    @Test
    void anOpenAiRunCountsTokensModelCallsToolCallsAnApprovalAndAFailure(@TempDir Path dir) throws Exception {
        try (ScriptedOpenAi llm = ScriptedOpenAi.start()) {
            llm.tool("lookup_inspection", args -> new ScriptedOpenAi.ToolAnswer(200, "passed"))
                    .tool("file_report", args -> new ScriptedOpenAi.ToolAnswer(200, "filed"))
                    .then(ScriptedOpenAi.toolCalls(new ScriptedOpenAi.Tokens(30, 7),
                            new ScriptedOpenAi.Call("call_1", "lookup_inspection", "{\"id\":\"EST-1\"}")))
                    .then(ScriptedOpenAi.text(new ScriptedOpenAi.Tokens(50, 4), "EST-1 ", "passed."))
                    .then(ScriptedOpenAi.toolCalls(new ScriptedOpenAi.Tokens(20, 3),
                            new ScriptedOpenAi.Call("call_r", "file_report", "{}")))
                    .then(ScriptedOpenAi.status(500, "{\"error\":{\"message\":\"overloaded\"}}"));
            String tools = "[{\"name\":\"lookup_inspection\",\"description\":\"Looks up\",\"url\":\""
                    + llm.toolUrl("lookup_inspection") + "\",\"risk\":\"low\"},{\"name\":\"file_report\","
                    + "\"description\":\"Files\",\"url\":\"" + llm.toolUrl("file_report") + "\",\"risk\":\"high\"}]";
            try (TestGateway g = TestGateway.start(dir, Map.of("runtime", "openai", "openai-base-url", llm.baseUrl(),
                    "model", "gpt-test", "moderation", false, "tools", tools))) {
                try (WsClient c = g.connect("/ws")) {
                    c.ask("s-metrics", "Did EST-1 pass?").untilCompleted();
                    List<JsonNode> asked = c.ask("s-metrics", "File the report")
                            .until(f -> f.path("type").asText().equals("tool_approval_request"));
                    c.send(dev.switchboard.core.Json.object().put("type", "tool_approval_response")
                            .put("approval_id", asked.get(asked.size() - 1).path("approval_id").asText())
                            .put("approved", true).toString());
                    c.until(f -> f.path("type").asText().equals("error"));
                }
                Map<String, Double> m = samples(get(g.port(), "/metrics").body());
                String model = "gen_ai_request_model=\"gpt-test\"";
                assertThat(sum(m, "gen_ai_client_token_usage_sum", model, "gen_ai_token_type=\"input\""))
                        .isEqualTo(100);
                assertThat(sum(m, "gen_ai_client_token_usage_sum", model, "gen_ai_token_type=\"output\""))
                        .isEqualTo(14);
                assertThat(sum(m, "gen_ai_client_operation_duration_seconds_count", model, "error_type=\"none\""))
                        .isEqualTo(3);
                assertThat(sum(m, "gen_ai_client_operation_duration_seconds_count", model, "error_type=\"500\""))
                        .isEqualTo(1);
                assertThat(sum(m, "gen_ai_client_operation_time_to_first_chunk_seconds_count", model)).isEqualTo(3);
                assertThat(sum(m, "gen_ai_execute_tool_duration_seconds_count",
                        "gen_ai_tool_name=\"lookup_inspection\"", "error_type=\"none\"")).isEqualTo(1);
                assertThat(sum(m, "gen_ai_execute_tool_duration_seconds_count", "gen_ai_tool_name=\"file_report\""))
                        .isEqualTo(1);
                assertThat(sum(m, "switchboard_approval_decision_seconds_count", "outcome=\"approved\"",
                        "via=\"hai\"")).isEqualTo(1);
                assertThat(sum(m, "switchboard_runs_ended_total", "error_code=\"upstream_error\"")).isEqualTo(1);
                assertThat(dashboardMetrics("gen_ai_")).hasSize(4).allSatisfy(name -> assertThat(m.keySet())
                        .as("docs/grafana-dashboard.json reads " + name).anyMatch(k -> k.startsWith(name)));
                assertThat(m.keySet()).anyMatch(k -> k.startsWith("switchboard_approval_decision_seconds"));
                assertThat(dashboardMetrics("switchboard_approval_")).allSatisfy(name -> assertThat(m.keySet())
                        .as("docs/grafana-dashboard.json reads " + name).anyMatch(k -> k.startsWith(name)));
            }
        }
    }

    @Test
    void aMetricsPortServesTheScrapeAloneAndOffTakesItFromTheMainPort(@TempDir Path dir) throws Exception {
        int free;
        try (ServerSocket s = new ServerSocket(0)) {
            free = s.getLocalPort();
        }
        try (TestGateway own = TestGateway.start(dir.resolve("own"), Map.of("metrics-port", free))) {
            assertThat(own.server.metricsPort()).isEqualTo(free);
            HttpResponse<String> scrape = get(free, "/metrics");
            assertThat(scrape.statusCode()).isEqualTo(200);
            assertThat(scrape.body()).contains("switchboard_runs_started_total");
            assertThat(get(free, "/other").statusCode()).isEqualTo(404);
            assertThat(get(own.server.port(), "/metrics").statusCode()).isEqualTo(404);
        }
        try (TestGateway off = TestGateway.start(dir.resolve("off"), Map.of("metrics", false))) {
            assertThat(off.server.metricsPort()).isEqualTo(-1);
            assertThat(get(off.server.port(), "/metrics").statusCode()).isEqualTo(404);
        }
    }
}
