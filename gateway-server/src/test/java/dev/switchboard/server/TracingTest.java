package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static dev.switchboard.server.ScriptedOpenAi.Call;
import static dev.switchboard.server.ScriptedOpenAi.Tokens;
import static dev.switchboard.server.ScriptedOpenAi.ToolAnswer;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spans over real sockets, into the SDK's in-memory exporter: a run's {@code invoke_agent} span in
 * the trace of the client's {@code traceparent}, its model and tool calls as children, the
 * {@code traceparent} sent upstream, an approval linked to its run, and no prompt recorded unless
 * asked (docs/observability.md).
 */
class TracingTest {
    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String PARENT = "00f067aa0ba902b7";
    private static final String TRACEPARENT = "00-" + TRACE + "-" + PARENT + "-01";

    @TempDir
    Path dataDir;
    private final InMemorySpanExporter spans = InMemorySpanExporter.create();
    private final OpenTelemetrySdk otel = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
            .addSpanProcessor(SimpleSpanProcessor.create(spans)).build()).build();
    private final ScriptedOpenAi llm = ScriptedOpenAi.start();
    private GatewayServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(Duration.ofSeconds(1)).join();
        }
        llm.close();
        otel.close();
    }

    private GatewayServer start(Map<String, Object> options) {
        GatewayConfig.Builder b = GatewayConfig.builder()
                .set(GatewayConfig.Option.PORT, 0)
                .set(GatewayConfig.Option.DATA_DIR, dataDir.toString())
                .set("demo-delay-ms", 0);
        options.forEach(b::set);
        server = GatewayServer.builder(b.build()).openTelemetry(otel).build();
        server.start().join();
        return server;
    }

    private GatewayServer openAi(Map<String, Object> extra) {
        Map<String, Object> options = new HashMap<>(Map.of("runtime", "openai", "openai-base-url", llm.baseUrl(),
                "model", "gpt-test", "moderation", false,
                "tools", "[{\"name\":\"lookup_inspection\",\"description\":\"Looks up an inspection\",\"url\":\""
                        + llm.toolUrl("lookup_inspection") + "\",\"risk\":\"low\"},{\"name\":\"file_report\","
                        + "\"description\":\"Files an official report\",\"url\":\"" + llm.toolUrl("file_report")
                        + "\",\"risk\":\"high\"}]"));
        options.putAll(extra);
        return start(options);
    }

    /** The first finished span named {@code name}, waited for: a client may see a run end a moment before its span does. */
    private SpanData span(String name) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (true) {
            var found = spans.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).findFirst();
            if (found.isPresent()) {
                return found.get();
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no span " + name + " in " + spans.getFinishedSpanItems());
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    private static String attr(SpanData s, String key) {
        return s.getAttributes().get(AttributeKey.stringKey(key));
    }

    @Test
    void aRunJoinsTheClientsTraceAndItsModelAndToolCallsAreChildrenThatCarryTheTraceUpstream() {
        openAi(Map.of());
        llm.tool("lookup_inspection", args -> new ToolAnswer(200, "passed"))
                .then(ScriptedOpenAi.toolCalls(new Tokens(30, 7),
                        new Call("call_1", "lookup_inspection", "{\"establishment_id\":\"EST-1\"}")))
                .then(ScriptedOpenAi.text(new Tokens(50, 4), "EST-1 ", "passed."));
        String thread = UUID.randomUUID().toString();
        List<JsonNode> events = AguiHttp.run(server.port(), AguiHttp.input(thread, "Did EST-1 pass?"),
                "traceparent", TRACEPARENT);
        assertThat(AguiHttp.types(events)).contains("RUN_FINISHED");

        SpanData run = span("invoke_agent openai");
        assertThat(run.getTraceId()).isEqualTo(TRACE);
        assertThat(run.getParentSpanId()).isEqualTo(PARENT);
        assertThat(attr(run, "gen_ai.operation.name")).isEqualTo("invoke_agent");
        assertThat(attr(run, "gen_ai.conversation.id")).isEqualTo(thread);
        assertThat(attr(run, "switchboard.dialect")).isEqualTo("agui");
        assertThat(attr(run, "enduser.id")).as("the principal only when an option allows it").isNull();
        assertThat(run.getStatus().getStatusCode()).isNotEqualTo(StatusCode.ERROR);

        List<SpanData> chats = spans.getFinishedSpanItems().stream().filter(s -> s.getName().equals("chat gpt-test"))
                .toList();
        assertThat(chats).hasSize(2).allSatisfy(chat -> {
            assertThat(chat.getKind()).isEqualTo(SpanKind.CLIENT);
            assertThat(chat.getParentSpanId()).isEqualTo(run.getSpanId());
            assertThat(attr(chat, "gen_ai.provider.name")).isEqualTo("openai");
            assertThat(attr(chat, "gen_ai.request.model")).isEqualTo("gpt-test");
            assertThat(attr(chat, "gen_ai.response.model")).isEqualTo(ScriptedOpenAi.MODEL);
            assertThat(chat.getAttributes().get(AttributeKey.doubleKey("gen_ai.response.time_to_first_chunk")))
                    .isPositive();
            assertThat(attr(chat, "gen_ai.input.messages")).as("no prompt without --otel-capture-content").isNull();
        });
        assertThat(chats.stream().map(c -> c.getAttributes().get(AttributeKey.longKey("gen_ai.usage.input_tokens"))))
                .containsExactlyInAnyOrder(30L, 50L);
        SpanData tool = span("execute_tool lookup_inspection");
        assertThat(tool.getParentSpanId()).isEqualTo(run.getSpanId());
        assertThat(attr(tool, "gen_ai.tool.call.id")).isEqualTo("call_1");

        // What went upstream carries the trace, as a child of the call that sent it.
        assertThat(llm.traceparents).hasSize(2);
        for (int i = 0; i < 2; i++) {
            String sent = llm.traceparents.get(i);
            assertThat(sent).startsWith("00-" + TRACE + "-");
            assertThat(chats.stream().map(SpanData::getSpanId)).contains(sent.split("-")[2]);
        }
        assertThat(llm.toolTraceparents).containsExactly("00-" + TRACE + "-" + tool.getSpanId() + "-01");
    }

    @Test
    void anApprovalIsASpanLinkedToItsRunAndAFailedRunsSpanSaysWhy() {
        openAi(Map.of());
        ch.qos.logback.classic.Logger hubLog = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                dev.switchboard.core.ConversationHub.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged =
                new ch.qos.logback.core.read.ListAppender<>();
        logged.start();
        hubLog.addAppender(logged);
        llm.tool("file_report", args -> new ToolAnswer(200, "filed RPT-7"))
                .then(ScriptedOpenAi.toolCalls(new Call("call_r", "file_report", "{\"inspection\":\"INS-7\"}")))
                .then(ScriptedOpenAi.status(500, "{\"error\":{\"message\":\"overloaded\"}}"));
        try (WsClient c = WsClient.connect(server.port(), "/ws")) {
            List<JsonNode> asked = c.ask("s-approve", "File the report for INS-7")
                    .until(f -> f.path("type").asText().equals("tool_approval_request"));
            JsonNode request = asked.get(asked.size() - 1);
            c.send(Json.object().put("type", "tool_approval_response").put("approval_id",
                    request.path("approval_id").asText()).put("approved", true).toString());
            c.until(f -> f.path("type").asText().equals("error"));
        }
        // The hub writes its line before the error reaches anyone: it is there once the client has the error.
        hubLog.detachAppender(logged);
        SpanData run = span("invoke_agent openai");
        SpanData approval = span("approval file_report");
        assertThat(approval.getLinks()).anySatisfy(l -> assertThat(l.getSpanContext().getSpanId())
                .isEqualTo(run.getSpanId()));
        assertThat(attr(approval, "switchboard.outcome")).isEqualTo("approved");
        assertThat(attr(approval, "switchboard.dialect")).isEqualTo("hai");
        assertThat(approval.getEndEpochNanos() - approval.getStartEpochNanos()).isPositive();
        assertThat(run.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(attr(run, "error.type")).isEqualTo("upstream_error");
        SpanData failedChat = spans.getFinishedSpanItems().stream()
                .filter(s -> s.getName().equals("chat gpt-test") && s.getStatus().getStatusCode() == StatusCode.ERROR)
                .findFirst().orElseThrow();
        assertThat(attr(failedChat, "error.type")).isEqualTo("500");
        // The hub's line about the failure carries the run's trace, for going from a log line to its trace.
        assertThat(logged.list).filteredOn(e -> e.getFormattedMessage().contains("failed with upstream_error"))
                .singleElement().satisfies(e -> {
                    assertThat(e.getMDCPropertyMap()).containsEntry("trace_id", run.getTraceId())
                            .containsEntry("span_id", run.getSpanId())
                            .containsEntry("run_id", attr(run, "switchboard.run.id"));
                });
    }

    @Test
    void promptsAndCompletionsAreRecordedOnlyWhenAskedAndAResumeIsASpanOfItsOwn() {
        openAi(Map.of("otel-capture-content", true));
        llm.then(ScriptedOpenAi.text("Keep it ", "below 8 °C."));
        String session = UUID.randomUUID().toString();
        long cursor;
        try (WsClient c = WsClient.connect(server.port(), "/hai/ws")) {
            List<JsonNode> frames = c.ask(session, "How cold is chilled?").untilCompleted();
            cursor = frames.stream().filter(f -> f.has("seq")).mapToLong(f -> f.path("seq").asLong()).min()
                    .orElseThrow();
        }
        SpanData chat = span("chat gpt-test");
        assertThat(attr(chat, "gen_ai.input.messages")).contains("How cold is chilled?");
        assertThat(attr(chat, "gen_ai.output.messages")).contains("below 8 °C.");
        try (WsClient back = WsClient.connect(server.port(), "/hai/ws?session_id=" + session + "&last_seq=" + cursor)) {
            back.untilCompleted();
        }
        SpanData resume = span("resume");
        assertThat(attr(resume, "gen_ai.conversation.id")).isEqualTo(session);
        assertThat(resume.getAttributes().get(AttributeKey.longKey("switchboard.events"))).isPositive();
    }

    @Test
    void anAguiUpstreamCallIsAChildOfTheRunAndCarriesTheTrace() throws Exception {
        try (AguiUpstreamServerTest.Agent agent = new AguiUpstreamServerTest.Agent()) {
            agent.then("""
                    {"type":"RUN_STARTED","threadId":"t","runId":"r"}
                    {"type":"TEXT_MESSAGE_CHUNK","messageId":"m-1","role":"assistant","delta":"Keep it cold."}
                    {"type":"RUN_FINISHED","threadId":"t","runId":"r"}
                    """);
            start(Map.of("runtime", "agui", "agui-upstream-url", agent.url(), "upstream-timeout-seconds", 5));
            List<JsonNode> events = AguiHttp.run(server.port(), AguiHttp.input(UUID.randomUUID().toString(), "How cold?"),
                    "traceparent", TRACEPARENT);
            assertThat(AguiHttp.types(events)).contains("RUN_FINISHED");
            SpanData run = span("invoke_agent agui");
            SpanData post = span("POST");
            assertThat(run.getTraceId()).isEqualTo(TRACE);
            assertThat(post.getParentSpanId()).isEqualTo(run.getSpanId());
            assertThat(post.getKind()).isEqualTo(SpanKind.CLIENT);
            assertThat(post.getAttributes().get(AttributeKey.longKey("http.response.status_code"))).isEqualTo(200L);
            assertThat(agent.next().headers().get("Traceparent"))
                    .containsExactly("00-" + TRACE + "-" + post.getSpanId() + "-01");
        }
    }

    @Test
    void withAnOtlpEndpointTheSpansAreExportedOverOtlpHttp() throws Exception {
        java.util.concurrent.BlockingQueue<byte[]> posts = new java.util.concurrent.LinkedBlockingQueue<>();
        java.util.List<String> types = new java.util.concurrent.CopyOnWriteArrayList<>();
        com.sun.net.httpserver.HttpServer collector = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress("127.0.0.1", 0), 0);
        collector.createContext("/v1/traces", ex -> {
            try (ex) {
                types.add(ex.getRequestHeaders().getFirst("Content-Type"));
                posts.add(ex.getRequestBody().readAllBytes());
                ex.sendResponseHeaders(200, -1);
            }
        });
        collector.start();
        try {
            GatewayConfig config = GatewayConfig.builder()
                    .set(GatewayConfig.Option.PORT, 0)
                    .set(GatewayConfig.Option.DATA_DIR, dataDir.toString())
                    .set("demo-delay-ms", 0)
                    .set("otlp-endpoint", "http://127.0.0.1:" + collector.getAddress().getPort() + "/")
                    .build();
            GatewayServer own = GatewayServer.builder(config).build();
            own.start().join();
            List<JsonNode> events = AguiHttp.run(own.port(), AguiHttp.input(UUID.randomUUID().toString(), "hello"),
                    "traceparent", TRACEPARENT);
            assertThat(AguiHttp.types(events)).contains("RUN_FINISHED");
            // Stopping exports what the batch holds.
            own.stop(Duration.ofSeconds(1)).join();
            byte[] body = posts.poll(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(body).as("an OTLP export reached the collector").isNotNull();
            String raw = new String(body, java.nio.charset.StandardCharsets.ISO_8859_1);
            assertThat(raw).contains("invoke_agent demo").contains("switchboard");
            assertThat(types).allSatisfy(t -> assertThat(t).isEqualTo("application/x-protobuf"));
        } finally {
            collector.stop(0);
        }
    }
}
