package dev.switchboard.server;

import dev.switchboard.store.sqlite.SqliteConversationStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

import static dev.switchboard.server.SoakChecks.awaitTheEnd;
import static dev.switchboard.server.SoakChecks.checkTranscripts;
import static dev.switchboard.server.SoakChecks.checkView;
import static dev.switchboard.server.SoakChecks.clientsByDialect;
import static dev.switchboard.server.SoakChecks.sleepUntil;
import static dev.switchboard.server.SoakChecks.traffic;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The chaos soak: for a fixed time a few hundred clients in every dialect ask the demo agent for
 * runs, drop their connections at random points and resume from their cursors, read slowly, send
 * malformed frames, and an A2H operator answers the approvals; halfway through, the gateway is
 * killed with SIGKILL and started again on the same data. Then every client's view is held against
 * the store, every stored run against the demo's answers, the gateway's log against Netty's leak
 * detector, and its heap against where it started.
 *
 * <p>Short in the build ({@code soak.clients} 240, {@code soak.seconds} 40); longer by hand, e.g.
 * {@code ./mvnw -pl gateway-server -am test -Dtest=ChaosSoakTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Dsoak.clients=480 -Dsoak.seconds=300}. The figures go to stdout and {@code target/soak-report.txt}.
 */
class ChaosSoakTest {
    @TempDir
    Path dir;

    @Test
    void clientsInEveryDialectLoseNothingThroughDropsSlowReadsGarbageAndAKillNine() throws Exception {
        SoakPlan plan = new SoakPlan();
        Path data = Files.createDirectories(dir.resolve("data"));
        int port = ChildGateway.freePort();
        List<String> jvm = new ArrayList<>(List.of("-Xmx512m", "-Dlogback.configurationFile="
                + Path.of(ChaosSoakTest.class.getResource("/soak-logback.xml").toURI())));
        String extraJvmArgs = System.getProperty("soak.jvmArgs", "");
        if (!extraJvmArgs.isBlank()) {
            jvm.addAll(List.of(extraJvmArgs.strip().split("\\s+")));
        }
        String[] options = {"--demo-delay-ms", "10", "--rate-limit-runs-per-minute", "0",
            "--max-connections-per-client", "100000", "--max-outbound-bytes", "65536",
            "--socket-send-buffer-bytes", "16384", "--shutdown-grace-seconds", "5"};
        List<Path> logs = List.of(dir.resolve("gateway-1.log"), dir.resolve("gateway-2.log"));
        List<SoakClient> clients = new ArrayList<>();
        Map<String, Long> heap = new LinkedHashMap<>();
        ChildGateway first = ChildGateway.start(data, port, logs.get(0), jvm, options);
        ChildGateway second = null;
        try {
            traffic(port);
            heap.put("before", first.heapUsedAfterGc());
            plan.nodes(List.of(port));

            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < plan.clients; i++) {
                SoakClient c = SoakClient.of(i, plan.dialects.get(i % plan.dialects.size()), "soak-" + i + "-" + UUID.randomUUID(),
                        i % plan.slowEvery == 3, plan);
                clients.add(c);
                Thread t = new Thread(c, "soak-client-" + i);
                t.setDaemon(true);
                threads.add(t);
            }
            SoakOperator operator = new SoakOperator(plan);
            Thread operatorThread = new Thread(operator, "soak-operator");
            operatorThread.setDaemon(true);
            operatorThread.start();
            for (Thread t : threads) {
                t.start();
                Thread.sleep(5);
            }

            sleepUntil(plan.startNanos + plan.duration.toNanos() / 2);
            plan.killed(port);
            System.out.println("kill at " + (System.nanoTime() - plan.startNanos) / 1_000_000 + "ms");
            first.kill();
            second = ChildGateway.start(data, port, logs.get(1), jvm, options);
            plan.servingAgain();
            System.out.println("restarted at " + (System.nanoTime() - plan.startNanos) / 1_000_000 + "ms");

            awaitTheEnd(plan, clients, threads, operator, operatorThread);

            // Netty reports a leaked buffer when a later allocation finds it collected: collect, then allocate.
            for (int i = 0; i < 3; i++) {
                second.heapUsedAfterGc();
                traffic(port);
            }
            heap.put("after", second.heapUsedAfterGc());
            assertThat(second.stop()).as("exit code after SIGTERM").isIn(0, 143);
        } finally {
            first.process.destroyForcibly();
            if (second != null) {
                second.process.destroyForcibly();
            }
        }

        List<String> logLines = new ArrayList<>();
        Path kept = Files.createDirectories(Path.of("target", "soak-logs"));
        for (Path log : logs) {
            logLines.addAll(Files.readAllLines(log, StandardCharsets.UTF_8));
            Files.copy(log, kept.resolve(log.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        Map<String, Long> stored;
        try (SqliteConversationStore store = SqliteConversationStore.open(data)) {
            for (SoakClient c : clients) {
                checkView(c, store.events(c.conversation, 0, Integer.MAX_VALUE), plan);
            }
            stored = checkTranscripts(clients, store, plan);
        }

        long loggedCutoffs = logLines.stream().filter(l -> l.contains("fell more than")).count();
        String report = String.join("\n",
                "clients                 " + plan.clients + " (" + clientsByDialect(clients) + "; "
                        + clients.stream().filter(c -> c.slow).count() + " slow readers, "
                        + clients.stream().filter(c -> c instanceof SoakStalledReader).count()
                        + " of them HAI clients that stop reading for 12-16 s mid-answer)",
                "soak                    " + plan.duration.toSeconds() + " s, kill -9 at "
                        + plan.duration.toSeconds() / 2 + " s, seed " + plan.seed,
                plan.figures(),
                stored.entrySet().stream().map(e -> String.format("%-23s %d", e.getKey(), e.getValue()))
                        .collect(Collectors.joining("\n")),
                "cut-offs the gateway logged " + loggedCutoffs,
                String.format("heap after GC           %.1f MiB before, %.1f MiB after", heap.get("before") / 1048576.0,
                        heap.get("after") / 1048576.0),
                plan.failures.isEmpty() ? "" : "failures:\n" + String.join("\n", plan.failures));
        System.out.println("Chaos soak\n" + report.lines().limit(30).collect(Collectors.joining("\n")));
        Files.writeString(Path.of("target", "soak-report.txt"), report + "\n", StandardCharsets.UTF_8);

        assertThat(logLines).as("Netty's leak detector").noneMatch(l -> l.contains("LEAK:"));
        assertThat(logLines).as("errors the gateway logged").noneMatch(l -> l.contains(" ERROR "));
        // The runs that crash because their prompt asks it are the only failed runs logged at WARN.
        assertThat(logLines).as("warnings the gateway logged").noneMatch(l -> l.contains(" WARN ")
                && !l.contains("no --a2h-api-key is configured")
                && !l.contains("failed with internal_error: the demo agent crashed while answering"));
        assertThat(plan.failures).as("failures found").isEmpty();
        assertThat(plan.slowCutoffs.get() + plan.streamsEnded.get())
                .as("connections the clients saw cut off, against the cut-offs the gateway logged")
                .isLessThanOrEqualTo(loggedCutoffs);
        assertThat(plan.resumes.get()).as("clients resumed").isPositive();
        assertThat(plan.crashDrops.get()).as("connections the kill took").isPositive();
        assertThat(heap.get("after")).as("heap after the soak, bytes").isLessThanOrEqualTo(
                heap.get("before") + plan.heapSlackBytes);
    }
}
