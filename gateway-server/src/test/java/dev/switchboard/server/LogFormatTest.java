package dev.switchboard.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import dev.switchboard.core.LogContext;
import dev.switchboard.server.internal.LogSetup;
import net.logstash.logback.encoder.LoggingEventCompositeJsonEncoder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The two log formats as {@code Main} sets them up with the real logback.xml, in a child JVM:
 * {@code --log-format json} writes one JSON object a line with the fields the README lists and the
 * ids of the run a line was logged for; the default text ends such a line with its ids.
 */
class LogFormatTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final Pattern ISO_UTC_MILLIS = Pattern.compile("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");

    @TempDir
    Path dir;

    @Test
    void jsonLogsAreOneObjectALineAndALineOfARunCarriesItsConversationAndRunIds() throws Exception {
        String thread = "t-" + UUID.randomUUID();
        String run = "r-" + UUID.randomUUID();
        List<String> lines = crashARun(thread, run, "--log-format", "json");

        List<JsonNode> objects = new ArrayList<>();
        for (String line : lines) {
            JsonNode node = Json.parseStrict(line);
            assertThat(node.isObject()).as(line).isTrue();
            assertThat(node.path("timestamp").asText()).as(line).matches(ISO_UTC_MILLIS);
            assertThat(node.path("level").asText()).as(line).isIn("TRACE", "DEBUG", "INFO", "WARN", "ERROR");
            assertThat(node.path("logger").asText()).as(line).startsWith("dev.switchboard.");
            assertThat(node.path("thread").asText()).as(line).isNotEmpty();
            assertThat(node.path("message").isTextual()).as(line).isTrue();
            objects.add(node);
        }
        assertThat(objects).anySatisfy(o -> {
            assertThat(o.path("message").asText()).startsWith("Switchboard listening on");
            assertThat(o.has(LogContext.CONVERSATION_ID)).isFalse();
        });
        assertThat(objects).anySatisfy(o -> {
            assertThat(o.path("level").asText()).isEqualTo("WARN");
            assertThat(o.path("message").asText()).contains("run " + run).contains("failed with internal_error");
            assertThat(o.path(LogContext.CONVERSATION_ID).asText()).isEqualTo(thread);
            assertThat(o.path(LogContext.RUN_ID).asText()).isEqualTo(run);
        });
    }

    @Test
    void textLogsAreTheDefaultAndEndALineOfARunWithItsIds() throws Exception {
        String thread = "t-" + UUID.randomUUID();
        String run = "r-" + UUID.randomUUID();
        List<String> lines = crashARun(thread, run);
        assertThat(lines).noneMatch(l -> l.startsWith("{"));
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("Switchboard listening on").doesNotContain("["
                + LogContext.CONVERSATION_ID));
        assertThat(lines).anySatisfy(l -> assertThat(l).contains(" WARN ").contains("failed with internal_error")
                .endsWith(" [" + LogContext.CONVERSATION_ID + "=" + thread + ", " + LogContext.RUN_ID + "=" + run + "]"));
    }

    @Test
    void theJsonEncoderWritesEveryMdcKeyAsAFieldAndTheStackTrace() throws Exception {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        LoggingEventCompositeJsonEncoder encoder = LogSetup.jsonEncoder(context);
        Logger logger = context.getLogger("dev.switchboard.test");
        String line;
        try (LogContext.Scope ids = LogContext.open("conv-1", "run-1")) {
            MDC.put("trace_id", "0af7651916cd43dd8448eb211c80319c");
            LoggingEvent event = new LoggingEvent(Logger.class.getName(), logger, Level.ERROR, "it broke: {}",
                    new IllegalStateException("the cause"), new Object[] {"badly"});
            event.prepareForDeferredProcessing();
            line = new String(encoder.encode(event), StandardCharsets.UTF_8);
        } finally {
            MDC.remove("trace_id");
            encoder.stop();
        }
        assertThat(line).endsWith("\n").doesNotContain("\n{");
        JsonNode o = Json.parseStrict(line.strip());
        assertThat(o.path("message").asText()).isEqualTo("it broke: badly");
        assertThat(o.path("level").asText()).isEqualTo("ERROR");
        assertThat(o.path("logger").asText()).isEqualTo("dev.switchboard.test");
        assertThat(o.path("conversation_id").asText()).isEqualTo("conv-1");
        assertThat(o.path("run_id").asText()).isEqualTo("run-1");
        assertThat(o.path("trace_id").asText()).isEqualTo("0af7651916cd43dd8448eb211c80319c");
        assertThat(o.path("stack_trace").asText()).startsWith("java.lang.IllegalStateException: the cause")
                .contains("at dev.switchboard.server.LogFormatTest");
        List<String> names = new ArrayList<>();
        o.fieldNames().forEachRemaining(names::add);
        assertThat(names).startsWith("timestamp", "level", "logger", "thread", "message");
    }

    /**
     * Runs {@code Main} with the real logback.xml and these arguments, fails run {@code run} of
     * {@code thread} with the demo agent's crash, stops the gateway and gives what it wrote, a line each.
     */
    private List<String> crashARun(String thread, String run, String... args) throws Exception {
        Path logbackXml = Path.of(Main.class.getResource("/logback.xml").toURI());
        Path log = dir.resolve("gateway.log");
        ChildGateway child = ChildGateway.start(dir.resolve("data"), ChildGateway.freePort(), log,
                List.of("-Dlogback.configurationFile=" + logbackXml), args);
        try {
            String input = Json.object().put("threadId", thread).put("runId", run).set("messages",
                    Json.MAPPER.readTree("[{\"id\":\"m1\",\"role\":\"user\",\"content\":\"please crash\"}]")).toString();
            HttpResponse<String> res = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + child.port
                            + "/agui")).timeout(Duration.ofSeconds(20)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(input)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(res.body()).contains("RUN_ERROR");
        } finally {
            assertThat(child.stop()).as("exit code after SIGTERM").isIn(0, 143);
        }
        return Files.readAllLines(log, StandardCharsets.UTF_8).stream().filter(l -> !l.isBlank()).toList();
    }
}
