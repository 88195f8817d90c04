package dev.switchboard.server;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.LoggerFactory;

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
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;

import static dev.switchboard.server.ScriptedOpenAi.Call;
import static dev.switchboard.server.ScriptedOpenAi.Tokens;
import static dev.switchboard.server.ScriptedOpenAi.ToolAnswer;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code openai} runtime behind the whole gateway, against a scripted OpenAI-compatible server
 * on loopback: streamed text and tool calls, the tool loop with HTTP tools, approvals answered over
 * HAI, frontend tools over AG-UI, history, cancellation and every kind of upstream failure.
 */
class OpenAiRuntimeServerTest {
    private static final String KEY = "sk-test-0123456789";

    @TempDir
    Path dataDir;
    private final ScriptedOpenAi llm = ScriptedOpenAi.start();
    private TestGateway gateway;

    @AfterEach
    void stop() {
        if (gateway != null) {
            gateway.close();
        }
        llm.close();
    }

    private TestGateway gateway(Map<String, Object> extra) {
        Map<String, Object> options = new HashMap<>(Map.of("runtime", "openai",
                "openai-base-url", llm.baseUrl(), "model", "gpt-test", "openai-api-key", KEY,
                "system-prompt", "You answer food-safety questions.", "moderation", false));
        options.putAll(extra);
        gateway = TestGateway.start(dataDir, options);
        return gateway;
    }

    private TestGateway gateway() {
        return gateway(Map.of());
    }

    /** The tools option: {@code lookup_inspection} (risk low) and {@code file_report} (risk high). */
    private String tools() {
        return "[{\"name\":\"lookup_inspection\",\"description\":\"Looks up an inspection\","
                + "\"parameters\":{\"type\":\"object\",\"properties\":{\"establishment_id\":{\"type\":\"string\"}}},"
                + "\"url\":\"" + llm.toolUrl("lookup_inspection") + "\",\"risk\":\"low\"},"
                + "{\"name\":\"file_report\",\"description\":\"Files an official report\","
                + "\"url\":\"" + llm.toolUrl("file_report") + "\",\"risk\":\"high\",\"headers\":{\"X-Tool-Key\":\"t\"}}]";
    }

    private static List<String> types(List<JsonNode> frames) {
        return frames.stream().map(f -> {
            String type = f.path("type").asText();
            return switch (type) {
                case "status", "tool_call" -> type + ":" + f.path("status").asText();
                default -> type;
            };
        }).toList();
    }

    private static String chunks(List<JsonNode> frames) {
        StringBuilder sb = new StringBuilder();
        frames.stream().filter(f -> f.path("type").asText().equals("assistant_message_chunk"))
                .forEach(f -> sb.append(f.path("content").asText()));
        return sb.toString();
    }

    private static JsonNode frame(List<JsonNode> frames, String type) {
        return frames.stream().filter(f -> types(List.of(f)).get(0).equals(type)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + type + " in " + frames));
    }

    private static JsonNode json(String text) {
        try {
            return Json.MAPPER.readTree(text);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    // ---- answers --------------------------------------------------------------------------

    @Test
    void streamedTextIsTheAnswerAndTheModelIsAskedWithTheSystemPromptAndUsage() {
        llm.then(ScriptedOpenAi.text("Keep chilled food ", "at 8 °C ", "or below."));
        try (WsClient c = gateway().connect("/ws")) {
            List<JsonNode> frames = c.ask("s1", "How cold must chilled food be?").untilCompleted();

            assertThat(chunks(frames)).isEqualTo("Keep chilled food at 8 °C or below.");
            assertThat(frames).filteredOn(f -> f.path("is_final").asBoolean()).hasSize(1);
            assertThat(types(frames)).startsWith("status:thinking").endsWith("status:completed");
        }
        JsonNode request = llm.requests.get(0);
        assertThat(request.path("model").asText()).isEqualTo("gpt-test");
        assertThat(request.path("stream").asBoolean()).isTrue();
        assertThat(request.path("stream_options").path("include_usage").asBoolean()).isTrue();
        assertThat(request.get("messages")).isEqualTo(json("""
                [{"role":"system","content":"You answer food-safety questions."},
                 {"role":"user","content":"How cold must chilled food be?"}]"""));
        assertThat(request.has("tools")).isFalse();
        assertThat(llm.authorizations).containsExactly("Bearer " + KEY);
    }

    @Test
    void theModelsUsageIsOnTheAguiRunFinished() {
        llm.then(ScriptedOpenAi.text("Hello", " there"));

        List<JsonNode> events = AguiHttp.run(gateway().port(), AguiHttp.input(UUID.randomUUID().toString(), "Hi"));

        assertThat(AguiHttp.text(events)).isEqualTo("Hello there");
        assertThat(AguiHttp.last(events).get("usage")).isEqualTo(json("""
                [{"model":"scripted-model","inputTokens":42,"outputTokens":2,"totalTokens":44}]"""));
    }

    @Test
    void manyNewConversationsAtOnceEachGetTheirWholeAnswerInOrderOverSse() throws Exception {
        int clients = 16;
        int runsEach = 8;
        for (int i = 0; i < clients * runsEach; i++) {
            llm.then(ScriptedOpenAi.text("Keep ", "it ", "cold."));
        }
        // One client address starts them all: no limit of runs a minute.
        int port = gateway(Map.of("rate-limit-runs-per-minute", 0)).port();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(clients);
        try {
            List<java.util.concurrent.Future<List<List<JsonNode>>>> done = new java.util.ArrayList<>();
            for (int c = 0; c < clients; c++) {
                done.add(pool.submit(() -> {
                    List<List<JsonNode>> answers = new java.util.ArrayList<>();
                    for (int r = 0; r < runsEach; r++) {
                        // Each a new conversation: its run starts on the event loop that read it.
                        answers.add(AguiHttp.run(port, AguiHttp.input(UUID.randomUUID().toString(), "Cold?")));
                    }
                    return answers;
                }));
            }
            for (var f : done) {
                for (List<JsonNode> events : f.get(60, java.util.concurrent.TimeUnit.SECONDS)) {
                    assertThat(AguiHttp.types(events)).startsWith("RUN_STARTED", "TEXT_MESSAGE_START")
                            .endsWith("TEXT_MESSAGE_END", "RUN_FINISHED");
                    assertThat(AguiHttp.text(events)).isEqualTo("Keep it cold.");
                }
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(llm.requests).hasSize(clients * runsEach);
    }

    /** A dialect that reports a run's token usage: how to run one message on it and read that usage. */
    enum UsageDialect {
        AGUI_SSE {
            JsonNode usageOfARun(int port, String text) {
                return AguiHttp.last(AguiHttp.run(port, AguiHttp.input(UUID.randomUUID().toString(), text))).get("usage");
            }

            JsonNode expected(long input, long output) {
                return aguiUsage(input, output);
            }
        },
        AGUI_WS {
            JsonNode usageOfARun(int port, String text) {
                try (WsClient c = WsClient.connect(port, "/agui/ws")) {
                    c.send(AguiHttp.input(UUID.randomUUID().toString(), text).toString());
                    List<JsonNode> events = c.until(e -> e.path("type").asText().equals("RUN_FINISHED"));
                    return events.get(events.size() - 1).get("usage");
                }
            }

            JsonNode expected(long input, long output) {
                return aguiUsage(input, output);
            }
        },
        AGENTSCOPE {
            JsonNode usageOfARun(int port, String text) {
                try {
                    HttpResponse<String> res = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                                    URI.create("http://127.0.0.1:" + port + "/process"))
                            .header("Content-Type", "application/json").timeout(Duration.ofSeconds(20))
                            .POST(HttpRequest.BodyPublishers.ofString(AgentScopeServerTest.request(null, text).toString()))
                            .build(), HttpResponse.BodyHandlers.ofString());
                    List<JsonNode> events = AgentScopeServerTest.events(res);
                    return events.get(events.size() - 1).get("usage");
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }

            JsonNode expected(long input, long output) {
                return json("{\"input_tokens\":%d,\"output_tokens\":%d,\"total_tokens\":%d}"
                        .formatted(input, output, input + output));
            }
        };

        abstract JsonNode usageOfARun(int port, String text);

        abstract JsonNode expected(long input, long output);

        private static JsonNode aguiUsage(long input, long output) {
            return json("[{\"model\":\"scripted-model\",\"inputTokens\":%d,\"outputTokens\":%d,\"totalTokens\":%d}]"
                    .formatted(input, output, input + output));
        }
    }

    static Stream<Arguments> toolLoops() {
        return Stream.of(UsageDialect.values())
                .flatMap(d -> Stream.of(Arguments.of(d, 2, 32, 13), Arguments.of(d, 3, 41, 17)));
    }

    @ParameterizedTest(name = "{0}, {1} model calls")
    @MethodSource("toolLoops")
    void everyModelCallOfAToolLoopCountsInTheRunsUsageThoughTheServerSendsNoTokenDetails(UsageDialect dialect,
                                                                                        int calls, long input,
                                                                                        long output) {
        Tokens[] tokens = {new Tokens(20, 7), new Tokens(12, 6), new Tokens(9, 4)};
        llm.tool("lookup_inspection", args -> new ToolAnswer(200, "passed"));
        for (int i = 0; i < calls - 1; i++) {
            llm.then(ScriptedOpenAi.toolCalls(tokens[i], new Call("call_" + i, "lookup_inspection",
                    "{\"establishment_id\":\"EST-" + i + "\"}")));
        }
        llm.then(ScriptedOpenAi.text(tokens[calls - 1], "All of them passed."));

        JsonNode usage = dialect.usageOfARun(gateway(Map.of("tools", tools())).port(), "Did they pass?");

        assertThat(llm.requests).hasSize(calls);
        assertThat(usage).isEqualTo(dialect.expected(input, output));
    }

    @Test
    void historyOfEarlierRunsIsSentWithEveryTurn() {
        llm.then(ScriptedOpenAi.text("Below 8 °C.")).then(ScriptedOpenAi.text("Yes, every day."));
        try (WsClient c = gateway().connect("/ws")) {
            c.ask("s-history", "How cold?").untilCompleted();
            c.ask("s-history", "Must I record it?").untilCompleted();
        }
        assertThat(llm.messages(1)).isEqualTo(json("""
                [{"role":"system","content":"You answer food-safety questions."},
                 {"role":"user","content":"How cold?"},
                 {"role":"assistant","content":"Below 8 °C."},
                 {"role":"user","content":"Must I record it?"}]"""));
    }

    @Test
    void aHistoryTooLongForMemoryIsReadFromTheStoreWhole() {
        String longAnswer = "Keep it below 8 °C. ".repeat(1_000);
        llm.then(ScriptedOpenAi.text(longAnswer)).then(ScriptedOpenAi.text("Yes.")).then(ScriptedOpenAi.text("Daily."));
        try (WsClient c = gateway().connect("/ws")) {
            c.ask("s-long", "How cold?").untilCompleted();
            c.ask("s-long", "Must I record it?").untilCompleted();
            c.ask("s-long", "How often?").untilCompleted();
        }
        assertThat(toList(llm.messages(2))).extracting(m -> m.path("content").asText()).containsExactly(
                "You answer food-safety questions.", "How cold?", longAnswer, "Must I record it?", "Yes.", "How often?");
    }

    // ---- tools ----------------------------------------------------------------------------

    @Test
    void aServerToolRunsOverHttpAndItsResultGoesBackToTheModel() {
        llm.tool("lookup_inspection", args -> new ToolAnswer(200, "{\"result\":\"passed\",\"id\":\""
                        + args.path("establishment_id").asText() + "\"}"))
                .then(ScriptedOpenAi.toolCalls(new Call("call_1", "lookup_inspection", "{\"establishment_id\":\"EST-1\"}")))
                .then(ScriptedOpenAi.text("EST-1 passed its inspection."));
        try (WsClient c = gateway(Map.of("tools", tools())).connect("/ws")) {
            List<JsonNode> frames = c.ask("s-tool", "Did EST-1 pass?").untilCompleted();

            assertThat(types(frames)).containsSubsequence("tool_call:started", "status:executing_tools",
                    "tool_call:completed", "assistant_message_chunk", "status:completed");
            JsonNode started = frame(frames, "tool_call:started");
            assertThat(started.path("tool_call_id").asText()).isEqualTo("call_1");
            assertThat(started.path("parameters")).isEqualTo(json("{\"establishment_id\":\"EST-1\"}"));
            assertThat(frame(frames, "tool_call:completed").path("result").asText())
                    .isEqualTo("{\"result\":\"passed\",\"id\":\"EST-1\"}");
            assertThat(chunks(frames)).isEqualTo("EST-1 passed its inspection.");
        }
        assertThat(llm.toolRequests.get("lookup_inspection")).containsExactly(json("{\"establishment_id\":\"EST-1\"}"));
        assertThat(llm.requests.get(0).get("tools").get(0).path("function").path("name").asText())
                .isEqualTo("lookup_inspection");
        List<JsonNode> second = List.copyOf(toList(llm.messages(1)));
        assertThat(second.subList(2, 4)).containsExactly(json("""
                {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
                  "function":{"name":"lookup_inspection","arguments":"{\\"establishment_id\\":\\"EST-1\\"}"}}]}"""),
                json("""
                {"role":"tool","tool_call_id":"call_1","content":"{\\"result\\":\\"passed\\",\\"id\\":\\"EST-1\\"}"}"""));
    }

    private static List<JsonNode> toList(JsonNode array) {
        return Stream.iterate(0, i -> i < array.size(), i -> i + 1).map(array::get).toList();
    }

    @Test
    void severalToolCallsInOneRoundAllRunBeforeTheModelIsAskedAgain() {
        llm.tool("lookup_inspection", args -> new ToolAnswer(200, "ok " + args.path("establishment_id").asText()))
                .then(ScriptedOpenAi.toolCalls(
                        new Call("call_a", "lookup_inspection", "{\"establishment_id\":\"A\"}"),
                        new Call("call_b", "lookup_inspection", "{\"establishment_id\":\"B\"}")))
                .then(ScriptedOpenAi.text("Both passed."));
        try (WsClient c = gateway(Map.of("tools", tools())).connect("/ws")) {
            List<JsonNode> frames = c.ask("s-two", "Did A and B pass?").untilCompleted();

            assertThat(frames).filteredOn(f -> types(List.of(f)).get(0).equals("tool_call:completed"))
                    .extracting(f -> f.path("result").asText()).containsExactly("ok A", "ok B");
        }
        List<JsonNode> second = toList(llm.messages(1));
        assertThat(second.get(2).get("tool_calls")).hasSize(2);
        assertThat(second.subList(3, 5)).extracting(m -> m.path("tool_call_id").asText() + "=" + m.path("content").asText())
                .containsExactly("call_a=ok A", "call_b=ok B");
    }

    @Test
    void aToolThatFailsIsReportedFailedAndTheModelReadsWhy() {
        llm.tool("lookup_inspection", args -> new ToolAnswer(503, "database down"))
                .then(ScriptedOpenAi.toolCalls(new Call("call_1", "lookup_inspection", "{\"establishment_id\":\"X\"}")))
                .then(ScriptedOpenAi.text("The records are unavailable."));
        try (WsClient c = gateway(Map.of("tools", tools())).connect("/ws")) {
            List<JsonNode> frames = c.ask("s-fail", "Check X").untilCompleted();

            assertThat(frame(frames, "tool_call:failed").path("result").asText())
                    .isEqualTo("the tool lookup_inspection answered HTTP 503: database down");
        }
        assertThat(toList(llm.messages(1)).get(3).path("content").asText()).contains("HTTP 503: database down");
    }

    @Test
    void aToolAtAHostNameThatIsNotFoundIsReportedFailedAndTheRunGoesOn() {
        // The tool is called after the model's answer, on the connection's event loop: its host name
        // is looked up on the runtime's pool, and never found (.invalid), or not within the timeout.
        String tools = "[{\"name\":\"lookup_inspection\",\"description\":\"Looks up an inspection\","
                + "\"url\":\"http://inspections.invalid:9/lookup\",\"risk\":\"low\"}]";
        llm.then(ScriptedOpenAi.toolCalls(new Call("call_1", "lookup_inspection", "{\"establishment_id\":\"X\"}")))
                .then(ScriptedOpenAi.text("The records are unavailable."));
        try (WsClient c = gateway(Map.of("tools", tools, "upstream-timeout-seconds", 5)).connect("/ws")) {
            List<JsonNode> frames = c.ask("s-unknown-host", "Check X").untilCompleted();

            assertThat(frame(frames, "tool_call:failed").path("result").asText())
                    .startsWith("the tool lookup_inspection failed: ");
            assertThat(chunks(frames)).isEqualTo("The records are unavailable.");
        }
    }

    @Test
    void anApprovalGatedToolRunsOnlyOnceApprovedOverHai() throws Exception {
        llm.tool("file_report", args -> new ToolAnswer(200, "filed RPT-7"))
                .then(ScriptedOpenAi.toolCalls(new Call("call_r", "file_report", "{\"inspection\":\"INS-7\"}")))
                .then(ScriptedOpenAi.text("Report RPT-7 is filed."));
        try (WsClient c = gateway(Map.of("tools", tools())).connect("/ws")) {
            List<JsonNode> asked = c.ask("s-approve", "File the report for INS-7")
                    .until(f -> f.path("type").asText().equals("tool_approval_request"));
            JsonNode request = asked.get(asked.size() - 1);
            assertThat(request.path("tool_name").asText()).isEqualTo("file_report");
            assertThat(request.path("tool_description").asText()).isEqualTo("Files an official report");
            assertThat(request.path("parameters")).isEqualTo(json("{\"inspection\":\"INS-7\"}"));
            assertThat(request.path("risk_level").asText()).isEqualTo("high");
            assertThat(llm.toolRequests).doesNotContainKey("file_report");

            c.send(Json.object().put("type", "tool_approval_response").put("approval_id",
                    request.path("approval_id").asText()).put("approved", true).toString());
            List<JsonNode> rest = c.untilCompleted();

            assertThat(frame(rest, "tool_call:completed").path("result").asText()).isEqualTo("filed RPT-7");
            assertThat(chunks(rest)).isEqualTo("Report RPT-7 is filed.");
        }
        assertThat(llm.toolRequests.get("file_report")).hasSize(1);
    }

    @Test
    void aRejectedToolDoesNotRunAndTheModelReadsTheRejection() {
        llm.then(ScriptedOpenAi.toolCalls(new Call("call_r", "file_report", "{\"inspection\":\"INS-8\"}")))
                .then(ScriptedOpenAi.text("Understood, no report."));
        try (WsClient c = gateway(Map.of("tools", tools())).connect("/ws")) {
            List<JsonNode> asked = c.ask("s-reject", "File the report for INS-8")
                    .until(f -> f.path("type").asText().equals("tool_approval_request"));
            c.send(Json.object().put("type", "tool_approval_response").put("approval_id",
                    asked.get(asked.size() - 1).path("approval_id").asText()).put("approved", false)
                    .put("feedback", "Not before the audit").toString());
            List<JsonNode> rest = c.untilCompleted();

            assertThat(frame(rest, "tool_call:failed").path("result").asText()).contains("rejected")
                    .contains("Not before the audit");
            assertThat(chunks(rest)).isEqualTo("Understood, no report.");
        }
        assertThat(llm.toolRequests).doesNotContainKey("file_report");
        JsonNode toolMessage = toList(llm.messages(1)).get(3);
        assertThat(toolMessage.path("tool_call_id").asText()).isEqualTo("call_r");
        assertThat(toolMessage.path("content").asText()).contains("rejected").contains("Not before the audit");
    }

    @Test
    void anApprovalPendingWhenTheGatewayStopsIsAnsweredAfterARestartAndTheWorkGoesOn() {
        llm.tool("file_report", args -> new ToolAnswer(200, "filed RPT-9"))
                .then(ScriptedOpenAi.toolCalls(new Call("call_r", "file_report", "{\"inspection\":\"INS-9\"}")))
                .then(ScriptedOpenAi.text("Filed after the restart."));
        String thread = UUID.randomUUID().toString();
        List<JsonNode> first = AguiHttp.run(gateway(Map.of("tools", tools())).port(),
                AguiHttp.input(thread, "File the report for INS-9"));
        JsonNode interrupt = AguiHttp.last(first).path("outcome").path("interrupts").get(0);
        assertThat(interrupt.path("toolCallId").asText()).isEqualTo("call_r");
        gateway.close();

        ObjectNode resume = Json.object().put("threadId", thread).put("runId", UUID.randomUUID().toString());
        resume.putArray("messages");
        resume.putArray("resume").addObject().put("interruptId", interrupt.path("id").asText())
                .put("status", "resolved").putObject("payload").put("approved", true);
        List<JsonNode> events = AguiHttp.run(gateway(Map.of("tools", tools())).port(), resume);

        assertThat(AguiHttp.first(events, "TOOL_CALL_RESULT").path("content").asText()).isEqualTo("filed RPT-9");
        assertThat(AguiHttp.text(events)).isEqualTo("Filed after the restart.");
        assertThat(AguiHttp.last(events).path("outcome").path("type").asText()).isEqualTo("success");
        assertThat(llm.toolRequests.get("file_report")).containsExactly(json("{\"inspection\":\"INS-9\"}"));
        assertThat(toList(llm.messages(1)).get(3)).isEqualTo(json(
                "{\"role\":\"tool\",\"tool_call_id\":\"call_r\",\"content\":\"filed RPT-9\"}"));
    }

    @Test
    void aFrontendToolEndsTheAguiRunWithTheCallAndTheNextRunCarriesItsResult() {
        llm.then(ScriptedOpenAi.toolCalls(new Call("call_map", "show_map", "{\"city\":\"Oslo\"}")))
                .then(ScriptedOpenAi.text("The map shows Oslo."));
        int port = gateway().port();
        String thread = UUID.randomUUID().toString();
        ObjectNode first = AguiHttp.input(thread, "Show me Oslo");
        first.putArray("tools").addObject().put("name", "show_map").put("description", "Shows a map")
                .putObject("parameters").put("type", "object");

        List<JsonNode> events = AguiHttp.run(port, first);

        assertThat(AguiHttp.types(events)).containsSubsequence("RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS",
                "TOOL_CALL_END", "RUN_FINISHED").doesNotContain("TOOL_CALL_RESULT");
        assertThat(AguiHttp.first(events, "TOOL_CALL_START").path("toolCallName").asText()).isEqualTo("show_map");
        assertThat(AguiHttp.last(events).path("outcome").path("type").asText()).isEqualTo("success");
        assertThat(llm.requests.get(0).get("tools").get(0).path("function").path("name").asText()).isEqualTo("show_map");

        // The client ran the tool; it resends the history with the call and its result, as AG-UI clients do.
        ObjectNode second = first.deepCopy().put("runId", UUID.randomUUID().toString());
        second.withArray("messages").addObject().put("id", "call_map").put("role", "assistant")
                .putArray("toolCalls").addObject().put("id", "call_map").put("type", "function")
                .putObject("function").put("name", "show_map").put("arguments", "{\"city\":\"Oslo\"}");
        second.withArray("messages").addObject().put("id", "result-1").put("role", "tool")
                .put("toolCallId", "call_map").put("content", "map shown");

        List<JsonNode> next = AguiHttp.run(port, second);

        assertThat(AguiHttp.text(next)).isEqualTo("The map shows Oslo.");
        List<JsonNode> asked = toList(llm.messages(1));
        assertThat(asked.get(2).get("tool_calls").get(0).path("id").asText()).isEqualTo("call_map");
        assertThat(asked.get(3)).isEqualTo(json("{\"role\":\"tool\",\"tool_call_id\":\"call_map\",\"content\":\"map shown\"}"));
        assertThat(asked).hasSize(4);
    }

    @Test
    void theToolRoundLimitEndsTheRunWithAClearError() {
        llm.tool("lookup_inspection", args -> new ToolAnswer(200, "again"))
                .then(ScriptedOpenAi.toolCalls(new Call("c1", "lookup_inspection", "{}")))
                .then(ScriptedOpenAi.toolCalls(new Call("c2", "lookup_inspection", "{}")));
        try (WsClient c = gateway(Map.of("tools", tools(), "max-tool-rounds", 1)).connect("/ws")) {
            JsonNode error = frame(c.ask("s-rounds", "Loop").untilCompleted(), "error");

            assertThat(error.path("error_code").asText()).isEqualTo("upstream_error");
            assertThat(error.path("message").asText()).contains("after 1 round of tool calls")
                    .contains("--max-tool-rounds");
        }
        assertThat(llm.toolRequests.get("lookup_inspection")).hasSize(1);
    }

    // ---- cancellation and failures -------------------------------------------------------------

    @Test
    void cancellingARunAbortsTheRequestToTheModel() throws Exception {
        llm.then(ScriptedOpenAi.streamUntilTheClientLeaves("Let me think"));
        TestGateway g = gateway();
        try (WsClient c = g.connect("/ws")) {
            c.ask("s-cancel", "Think for a long time");
            assertThat(llm.holding.await(10, TimeUnit.SECONDS)).isTrue();

            g.server.hub().submit(new Command.CancelRun("s-cancel", null), new Subscriber() {
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

            assertThat(frame(c.untilCompleted(), "error").path("error_code").asText()).isEqualTo("run_cancelled");
            assertThat(llm.clientLeft.await(10, TimeUnit.SECONDS)).as("the model server saw the request dropped").isTrue();
        }
    }

    /** An upstream failure: what the scripted server does, and what the run's error must say. */
    record Failure(String name, Function<ScriptedOpenAi, ScriptedOpenAi> script, String says) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Failure> failures() {
        return Stream.of(
                new Failure("HTTP 500 with the server's message", s -> s.then(ScriptedOpenAi.status(500,
                        "{\"error\":{\"message\":\"the model is overloaded\",\"type\":\"server_error\"}}")),
                        "answered HTTP 500 to POST http://127.0.0.1:"),
                new Failure("HTTP 404 with a hint", s -> s.then(ScriptedOpenAi.status(404,
                        "{\"error\":{\"message\":\"model 'gpt-test' not found\"}}")),
                        "model 'gpt-test' not found (check --openai-base-url and --model)"),
                new Failure("malformed event", s -> s.then(ScriptedOpenAi.raw("data: {\"choices\": [oops\n\n")),
                        "the model server sent an event that is not JSON: {\"choices\": [oops"),
                new Failure("a stream that ends without finish_reason", s -> s.then(ScriptedOpenAi.raw(
                        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Half an ans\"}}]}\n\n")),
                        "the model server's stream ended before the answer was finished (no finish_reason)"),
                new Failure("an error in the middle of the stream", s -> s.then(ScriptedOpenAi.raw(
                        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hal\"}}]}\n\n"
                                + "data: {\"error\":{\"message\":\"context length exceeded\"}}\n\n")),
                        "the model server reported an error mid-stream: context length exceeded"),
                new Failure("a body that is not an event stream", s -> s.then((ex, server) ->
                        ScriptedOpenAi.respond(ex, 200, "application/json", "{\"choices\":[]}")),
                        "with application/json instead of an event stream"),
                new Failure("no answer within the timeout", s -> s.then(ScriptedOpenAi.noAnswer()),
                        "did not answer within 1 s"),
                new Failure("silence in the middle of the answer", s -> s.then(ScriptedOpenAi.stallAfter("Hal")),
                        "sent nothing for 1 s in the middle of its answer (--upstream-timeout-seconds)"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("failures")
    void anUpstreamFailureEndsTheRunWithUpstreamErrorAndAMessageForTheOperator(Failure failure) {
        failure.script().apply(llm);
        try (WsClient c = gateway(Map.of("upstream-timeout-seconds", 1)).connect("/ws")) {
            List<JsonNode> frames = c.ask("s-failure", "Hello").untilCompleted();

            JsonNode error = frame(frames, "error");
            assertThat(error.path("error_code").asText()).isEqualTo("upstream_error");
            assertThat(error.path("message").asText()).contains(failure.says());
            assertThat(types(frames)).endsWith("error", "status:completed");
        }
    }

    @Test
    void anAnswerLongerThanTheTimeoutIsFineWhileTheModelKeepsWriting() {
        llm.then(ScriptedOpenAi.slowText(300, "One, ", "two, ", "three, ", "four, ", "five."));
        try (WsClient c = gateway(Map.of("upstream-timeout-seconds", 1)).connect("/ws")) {
            List<JsonNode> frames = c.ask("s-slow", "Count slowly").untilCompleted();

            assertThat(types(frames)).doesNotContain("error");
            assertThat(chunks(frames)).isEqualTo("One, two, three, four, five.");
        }
    }

    @Test
    void aModelServerThatIsNotRunningIsAClearError() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        try (WsClient c = gateway(Map.of("openai-base-url", "http://127.0.0.1:" + closedPort + "/v1"))
                .connect("/ws")) {
            JsonNode error = frame(c.ask("s-refused", "Hello").untilCompleted(), "error");

            assertThat(error.path("error_code").asText()).isEqualTo("upstream_error");
            assertThat(error.path("message").asText()).startsWith("cannot connect to the model server at http://127.0.0.1:"
                    + closedPort + "/v1/chat/completions");
        }
    }

    @Test
    void theApiKeyIsNeverShownNorLoggedEvenWhenTheServerEchoesIt() {
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        logs.start();
        root.addAppender(logs);
        try {
            llm.then(ScriptedOpenAi.status(401, "{\"error\":{\"message\":\"Incorrect API key provided: " + KEY + "\"}}"));
            try (WsClient c = gateway().connect("/ws")) {
                JsonNode error = frame(c.ask("s-key", "Hello").untilCompleted(), "error");

                assertThat(error.path("message").asText()).contains("HTTP 401").contains("Incorrect API key provided: ***")
                        .contains("(check --openai-api-key)").doesNotContain(KEY);
            }
            assertThat(logs.list).isNotEmpty().allSatisfy(e -> assertThat(e.getFormattedMessage()).doesNotContain(KEY));
        } finally {
            root.detachAppender(logs);
        }
    }

    @Test
    void aMissingModelStopsStartUpNamingTheOption() {
        GatewayConfig config = GatewayConfig.builder().set(Option.PORT, 0).set(Option.DATA_DIR, dataDir.toString())
                .set(Option.RUNTIME, "openai").set("openai-base-url", llm.baseUrl()).build();

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> GatewayServer.builder(config).build())
                .isInstanceOf(GatewayConfig.ConfigException.class)
                .hasMessageStartingWith("runtime openai: option --model is required");
    }

    @Test
    void aBadToolStopsStartUpNamingTheToolAndTheField() {
        GatewayConfig config = GatewayConfig.builder().set(Option.PORT, 0).set(Option.DATA_DIR, dataDir.toString())
                .set(Option.RUNTIME, "openai").set("openai-base-url", llm.baseUrl()).set("model", "m")
                .set("tools", "[{\"name\":\"weather\",\"url\":\"weather.example\"}]").build();

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> GatewayServer.builder(config).build())
                .hasMessage("runtime openai: option --tools: tool 0 (weather): field 'url' must be an absolute http or "
                        + "https URL, got 'weather.example'");
    }
}
