package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.store.sqlite.SqliteConversationStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The gateway's {@code Main} in child processes: what stops start-up, and how it says so. */
class StartupTest {
    @TempDir
    Path dir;

    /** The lines of output that are not log lines (those start with a time). */
    private static List<String> messages(ChildGateway.Exit exit) {
        return exit.output().lines().filter(l -> !l.matches("^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} .*")).toList();
    }

    @Test
    void aSecondGatewayOnTheSameDataDirectoryStopsWithoutTouchingTheRunningOnesHistory() throws Exception {
        Path data = dir.resolve("data");
        ChildGateway first = ChildGateway.start(data, ChildGateway.freePort(), dir.resolve("first.log"), List.of(),
                "--demo-delay-ms", "20");
        try {
            try (WsClient c = WsClient.connect(first.port, "/hai/ws")) {
                c.ask("live", "slow please");
                c.until(f -> f.path("content").asText().startsWith("chunk 3 "));
                // While the first streams: the same data directory on another port, then on the same port.
                for (int port : new int[] {ChildGateway.freePort(), first.port}) {
                    ChildGateway.Exit second = ChildGateway.run(Map.of(), "--port", String.valueOf(port),
                            "--data-dir", data.toString());
                    assertThat(second.code()).isEqualTo(1);
                    assertThat(messages(second)).containsExactly("switchboard: the data directory " + data
                            + " is in use by another gateway (pid " + first.process.pid()
                            + "); stop it, or give this one another --data-dir");
                    assertThat(second.output()).doesNotContain("interrupted by a stop").doesNotContain("\tat ");
                }
                List<JsonNode> rest = c.untilCompleted();
                assertThat(rest.get(rest.size() - 1).path("status").asText()).isEqualTo("completed");
            }
        } finally {
            first.stop();
        }
        assertThat(first.logText()).doesNotContain("failed").doesNotContain("ERROR");
        try (SqliteConversationStore store = SqliteConversationStore.open(data)) {
            List<Envelope> log = store.events("live", 0, 10_000);
            assertThat(log).extracting(Envelope::event).noneMatch(e -> e instanceof Event.RunFailed)
                    .anyMatch(e -> e instanceof Event.RunFinished);
        }
    }

    @Test
    void aPortInUseStopsStartUpWithOneLineBeforeTheStoreIsOpened() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Path data = dir.resolve("data");
            ChildGateway.Exit exit = ChildGateway.run(Map.of(), "--port", String.valueOf(taken.getLocalPort()),
                    "--data-dir", data.toString());
            assertThat(exit.code()).isEqualTo(1);
            assertThat(messages(exit)).containsExactly("switchboard: cannot listen on 127.0.0.1:" + taken.getLocalPort()
                    + ": the port is in use (another gateway or another program listens there); stop it, or choose"
                    + " another --port");
            assertThat(data.resolve(SqliteConversationStore.FILE_NAME)).doesNotExist();
        }
    }

    @Test
    void aStoreUrlNobodyListensAtStopsStartUpWithOneLineNamingTheDatabaseButNotThePassword() throws Exception {
        int closed = ChildGateway.freePort();
        ChildGateway.Exit exit = ChildGateway.run(Map.of(), "--port", "0", "--data-dir", dir.resolve("data").toString(),
                "--store-url", "postgresql://app:s3cret-pw@127.0.0.1:" + closed + "/history");
        assertThat(exit.code()).isEqualTo(1);
        assertThat(messages(exit)).hasSize(1);
        assertThat(messages(exit).get(0)).startsWith("switchboard: cannot open the store 127.0.0.1:" + closed
                + "/history: Connection to 127.0.0.1:" + closed + " refused.");
        assertThat(exit.output()).doesNotContain("s3cret-pw");
    }

    @Test
    void anAddressThatIsNotThisMachinesIsNotReportedAsAPortInUse() {
        // 192.0.2.1 is reserved for documentation: no machine has it, so the bind fails here without a packet.
        GatewayServer server = GatewayServer.builder(GatewayConfig.builder()
                .set(GatewayConfig.Option.HOST, "192.0.2.1").set(GatewayConfig.Option.PORT, 0)
                .set(GatewayConfig.Option.DATA_DIR, dir.resolve("data").toString()).build()).build();
        Throwable failure = org.assertj.core.api.Assertions.catchThrowable(() -> server.start().join());
        assertThat(failure).hasCauseInstanceOf(StartupException.class);
        assertThat(failure.getCause().getMessage()).startsWith("cannot listen on 192.0.2.1:0: ")
                .doesNotContain("in use");
    }

    @Test
    void configurationMistakesStopStartUpWithOneLineEach() throws Exception {
        Path malformed = dir.resolve("malformed.json");
        Files.writeString(malformed, "{\n  \"port\": 8000,\n  \"host\": \n}\n");
        Path blocker = dir.resolve("a-file");
        Files.writeString(blocker, "not a directory");
        record Case(List<String> args, int code, String message) {
        }
        for (Case c : List.of(
                new Case(List.of("--config", dir.resolve("missing.json").toString()), 2,
                        "switchboard: cannot read config file " + dir.resolve("missing.json") + ": it does not exist"),
                new Case(List.of("--config", malformed.toString()), 2,
                        "switchboard: config file " + malformed + " is not valid JSON at line 4, column 1: "
                                + "Unexpected character ('}' (code 125)): expected a value"),
                new Case(List.of("--port", "0", "--data-dir", blocker.resolve("data").toString()), 1,
                        "switchboard: cannot create the data directory " + blocker.resolve("data")
                                + ": Not a directory; choose another with --data-dir"),
                new Case(List.of("--log-level", "loud"), 2,
                        "switchboard: option --log-level is 'loud' but must be one of trace, debug, info, warn, error"))) {
            ChildGateway.Exit exit = ChildGateway.run(Map.of(), c.args().toArray(String[]::new));
            assertThat(exit.code()).as(c.args().toString()).isEqualTo(c.code());
            assertThat(messages(exit)).as(c.args().toString()).containsExactly(c.message());
        }
    }

    @Test
    void versionAndHelpAnswerWithoutStarting() throws Exception {
        ChildGateway.Exit version = ChildGateway.run(Map.of(), "--version");
        assertThat(version.code()).isZero();
        assertThat(version.output().strip()).matches("switchboard \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
        ChildGateway.Exit help = ChildGateway.run(Map.of(), "--help");
        assertThat(help.code()).isZero();
        // Descriptions wrap, so words are compared with the lines joined.
        assertThat(help.output().replaceAll("\\s+", " ")).contains("--version").contains("--log-level")
                .containsPattern("--runtime agent runtime: [^(]*one of demo, openai, agui \\(");
        // Every option's description starts in one column, however long the option's name.
        Pattern optionName = Pattern.compile("^  --\\S+ +");
        List<Integer> columns = help.output().lines().map(optionName::matcher).filter(Matcher::find)
                .map(Matcher::end).distinct().toList();
        assertThat(columns).hasSize(1);
        assertThat(help.output().lines()).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(110));
    }

    @Test
    void anEnvironmentVariableNamingNoOptionIsWarnedAbout() throws Exception {
        Path data = dir.resolve("data");
        // A port taken so that the child stops by itself once it has read its configuration.
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            ChildGateway.Exit exit = ChildGateway.run(Map.of("SWITCHBOARD_PORTT", "9000",
                    "SWITCHBOARD_PORT", String.valueOf(taken.getLocalPort()), "SWITCHBOARD_DATA_DIR", data.toString()));
            assertThat(exit.output()).contains("WARN ").contains("environment variable SWITCHBOARD_PORTT names no"
                    + " option and is ignored (did you mean SWITCHBOARD_PORT?)");
        }
    }

    @Test
    void theLogLevelOptionQuietsTheLog() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            String port = String.valueOf(taken.getLocalPort());
            String data = dir.resolve("d").toString();
            assertThat(ChildGateway.run(Map.of(), "--port", port, "--data-dir", data, "--log-level", "info").output())
                    .contains(" INFO ");
            // A variable naming no option, for a warning to show or not.
            Map<String, String> typo = Map.of("SWITCHBOARD_PORTT", "1");
            assertThat(ChildGateway.run(typo, "--port", port, "--data-dir", data, "--log-level", "WARN").output())
                    .doesNotContain(" INFO ").contains(" WARN ");
            assertThat(ChildGateway.run(Map.of("SWITCHBOARD_PORTT", "1", "SWITCHBOARD_LOG_LEVEL", "error"),
                    "--port", port, "--data-dir", data).output()).doesNotContain(" INFO ").doesNotContain(" WARN ");
        }
    }

    @Test
    void theStandaloneGatewayRunsNettyWithoutLeakDetectionOrRecyclerUnlessTheCommandLineGivesThem() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            ChildGateway.Exit exit = ChildGateway.run(Map.of(), "--port", String.valueOf(taken.getLocalPort()),
                    "--data-dir", dir.resolve("d").toString(), "--log-level", "info");
            assertThat(exit.output()).contains(
                    "netty: io.netty.leakDetection.level=disabled, io.netty.recycler.maxCapacityPerThread=0\n");
        }
        // ChildGateway gives paranoid leak detection on the command line, as every test runs.
        ChildGateway given = ChildGateway.start(dir.resolve("data"), ChildGateway.freePort(), dir.resolve("given.log"),
                List.of("-Dio.netty.recycler.maxCapacityPerThread=16"), "--log-level", "info");
        try {
            assertThat(given.logText()).contains("netty: io.netty.leakDetection.level=paranoid (given),"
                    + " io.netty.recycler.maxCapacityPerThread=16 (given)\n");
        } finally {
            given.stop();
        }
    }
}
