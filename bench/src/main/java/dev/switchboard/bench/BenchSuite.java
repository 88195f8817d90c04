package dev.switchboard.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The whole suite in one command: JMH codec benchmarks, the end-to-end load against the gateway,
 * the floor and the Node peer, connection density, the openai runtime against a scripted model,
 * a two-node cluster against one node, then BENCHMARKS.md and the throughput chart.
 * {@code bench/run.sh} builds what it needs and runs this from the repository's root.
 */
public final class BenchSuite {
    private static final String USAGE = """
            usage: java -jar bench/target/switchboard-bench.jar [options]   (run from the repository root)
              --smoke                 tiny runs that check the suite works (well under a minute); writes
                                      bench/target/bench-work/BENCHMARKS-smoke.md unless --out is given
              --out FILE              the report (default BENCHMARKS.md; with --skip,
                                      bench/target/bench-work/BENCHMARKS-partial.md)
              --chart FILE            the throughput chart (default docs/bench-throughput.png; with --skip,
                                      bench/target/bench-work/bench-throughput-partial.png)
              --skip PHASES           comma-separated: codec, e2e, density, llm, cluster
              --clients LIST          client counts of the throughput curve (default 1,10,100,1000)
              --chunks N              chunks per benchmark run (default 100)
              --frames N              frames per throughput point and per cluster point (default 200000)
              --rounds N              rounds of the throughput curve and of the cluster phase, alternating
                                      order (default 2)
              --density N             idle connections for the density phase (default 10000)
              --cluster-conversations N  conversations of the cluster phase (default 1000)
              --client-threads N      event-loop threads of the load generator (default 1)
              --server-jvm-args ARGS  JVM options for the gateway and the floor (default none)
              --server-java FILE      the java that runs the gateway and the floor (default the one running
                                      the suite, which also runs the load generator)
              --gateway-jar FILE      (default gateway-server/target/switchboard.jar)
              --node-dir DIR          the peer's directory, npm ci done (default bench/src/main/node)
              --work-dir DIR          logs, JMH output, data directories (default bench/target/bench-work)
            """;

    private BenchSuite() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("java.awt.headless", "true");
        boolean smoke = false;
        Path out = null;
        Path chart = null;
        Set<String> skip = Set.of();
        int[] clients = null;
        Integer chunks = null;
        Long frames = null;
        Integer rounds = null;
        Integer density = null;
        Integer clusterConversations = null;
        int clientThreads = 1;
        List<String> serverJvmArgs = List.of();
        String serverJava = null;
        Path gatewayJar = Path.of("gateway-server/target/switchboard.jar");
        Path nodeDir = Path.of("bench/src/main/node");
        Path workDir = Path.of("bench/target/bench-work");
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--smoke")) {
                smoke = true;
                continue;
            }
            if (a.equals("--help") || a.equals("-h")) {
                System.out.print(USAGE);
                return;
            }
            if (i + 1 >= args.length) {
                fail("option " + a + " needs a value");
            }
            String v = args[++i];
            switch (a) {
                case "--out" -> out = Path.of(v);
                case "--chart" -> chart = Path.of(v);
                case "--skip" -> skip = Set.of(v.split(","));
                case "--clients" -> clients = Arrays.stream(v.split(",")).mapToInt(Integer::parseInt).sorted().toArray();
                case "--chunks" -> chunks = Integer.parseInt(v);
                case "--frames" -> frames = Long.parseLong(v);
                case "--rounds" -> rounds = Integer.parseInt(v);
                case "--density" -> density = Integer.parseInt(v);
                case "--cluster-conversations" -> clusterConversations = Integer.parseInt(v);
                case "--client-threads" -> clientThreads = Integer.parseInt(v);
                case "--server-jvm-args" -> serverJvmArgs = v.isBlank() ? List.of() : List.of(v.strip().split("\\s+"));
                case "--server-java" -> serverJava = v;
                case "--gateway-jar" -> gatewayJar = Path.of(v);
                case "--node-dir" -> nodeDir = Path.of(v);
                case "--work-dir" -> workDir = Path.of(v);
                default -> fail("unknown option " + a);
            }
        }
        for (String phase : skip) {
            if (!Set.of("codec", "e2e", "density", "llm", "cluster").contains(phase)) {
                fail("--skip takes codec, e2e, density, llm or cluster, not " + phase);
            }
        }
        // Only a whole run replaces the committed report and chart unless --out and --chart say otherwise.
        String scratchName = smoke ? "smoke" : skip.isEmpty() ? null : "partial";
        if (out == null) {
            out = scratchName != null ? workDir.resolve("BENCHMARKS-" + scratchName + ".md") : Path.of("BENCHMARKS.md");
        }
        if (chart == null) {
            chart = scratchName != null ? workDir.resolve("bench-throughput-" + scratchName + ".png")
                    : Path.of("docs/bench-throughput.png");
        }
        EndToEnd.Settings base = smoke ? EndToEnd.Settings.smoke() : EndToEnd.Settings.full();
        EndToEnd.Settings e2eSettings = new EndToEnd.Settings(clients != null ? clients : base.clients(),
                chunks != null ? chunks : base.chunks(), frames != null ? frames : base.framesPerPoint(),
                rounds != null ? rounds : base.rounds(), base.limit(), base.pacedFor(), clientThreads, serverJvmArgs);
        int idle = density != null ? density : smoke ? 500 : 10_000;
        ClusterBench.Settings clusterBase = smoke ? ClusterBench.Settings.smoke(clientThreads, serverJvmArgs)
                : ClusterBench.Settings.full(clientThreads, serverJvmArgs);
        ClusterBench.Settings clusterSettings = new ClusterBench.Settings(
                clusterConversations != null ? clusterConversations : clusterBase.conversations(),
                chunks != null ? chunks : clusterBase.chunks(), frames != null ? frames : clusterBase.framesPerPoint(),
                rounds != null ? rounds : clusterBase.rounds(), clusterBase.limit(), clusterBase.warmUp(),
                clusterBase.pacedConversations(), clusterBase.pacedFor(), clientThreads, serverJvmArgs);

        Files.createDirectories(workDir);
        String java = serverJava != null ? serverJava : ProcessHandle.current().info().command().orElse("java");
        Path benchJar = Path.of(BenchSuite.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        if (!skip.contains("e2e") || !skip.contains("density") || !skip.contains("llm") || !skip.contains("cluster")) {
            require(Files.isRegularFile(gatewayJar), "no gateway jar at " + gatewayJar + "; build it first (bench/run.sh does)");
        }
        if (!skip.contains("e2e")) {
            require(Files.isDirectory(nodeDir.resolve("node_modules/ws")), "the peer's packages are not installed in "
                    + nodeDir + "; run npm ci there (bench/run.sh does)");
        }

        long start = System.nanoTime();
        Machine machine = Machine.read(Path.of("."));
        if (serverJava != null) {
            machine = machine.withServerJava(serverJava);
        }
        log("suite" + (smoke ? " (smoke)" : "") + " on " + machine.cores() + " cores, load " + machine.loadStart());

        CodecBench.Results codec = null;
        if (!skip.contains("codec")) {
            codec = new CodecBench(smoke ? CodecBench.Settings.smoke() : CodecBench.Settings.full(), workDir).run();
            for (CodecBench.TextDeltaRow t : codec.textDelta()) {
                log(String.format("TextDelta %-15s encoder %5.0f ns CPU (%5.0f JMH) %4.0f B   naive %5.0f ns CPU "
                                + "(%5.0f JMH) %4.0f B   %.1fx   gateway's writer %5.0f ns CPU %4.0f B", t.dialect().id,
                        t.encoder().cpuNs(), t.encoder().ns(), t.encoder().allocBytes(), t.naive().cpuNs(),
                        t.naive().ns(), t.naive().allocBytes(), t.speedup(), t.server().cpuNs(), t.server().allocBytes()));
            }
        }

        EndToEnd.Results e2e = null;
        if (!skip.contains("e2e")) {
            e2e = new EndToEnd(e2eSettings, workDir, gatewayJar, benchJar, nodeDir, java).run();
        }

        List<Density.Result> densities = null;
        if (!skip.contains("density")) {
            densities = new ArrayList<>();
            Density d = new Density(java, smoke ? 200 : 2000);
            log("density: " + idle + " idle connections to a fresh gateway");
            try (ServerProcess gateway = EndToEnd.startGateway(java, gatewayJar, serverJvmArgs, workDir, "density-gateway")) {
                densities.add(rename(d.measure(gateway, Dialect.HAI_WS, idle, clientThreads), EndToEnd.GATEWAY));
            }
            if (!smoke) {
                log("density: " + idle + " idle connections to a fresh floor");
                try (ServerProcess floor = EndToEnd.startFloor(java, benchJar, serverJvmArgs, workDir)) {
                    densities.add(rename(d.measure(floor, Dialect.AGUI_WS, idle, clientThreads), EndToEnd.FLOOR));
                }
            }
            for (Density.Result r : densities) {
                log(String.format("density %-8s %,d connections: heap %.1f KiB, RSS %.1f KiB per connection", r.server(),
                        r.connections(), r.heapPerConnection() / 1024, r.rssPerConnection() / 1024));
            }
        }

        LlmBench.Results llm = null;
        if (!skip.contains("llm")) {
            llm = new LlmBench(smoke ? LlmBench.Settings.smoke(serverJvmArgs) : LlmBench.Settings.full(serverJvmArgs),
                    workDir, gatewayJar, java).run();
        }

        ClusterBench.Results cluster = null;
        if (!skip.contains("cluster")) {
            cluster = new ClusterBench(clusterSettings, workDir, gatewayJar, java).run();
        }

        Path notes = Path.of("bench/NOTES.md");
        String command = "./bench/run.sh" + (args.length == 0 ? "" : " " + String.join(" ", args));
        Report.write(new Report.Inputs(machine.ended(), command, smoke, codec, e2e, e2eSettings, densities, llm, cluster,
                Files.isRegularFile(notes) && !smoke ? Files.readString(notes) : null, chart, out,
                (System.nanoTime() - start) / 1e9));
        log("wrote " + out + (e2e != null ? " and " + chart : "") + String.format(" in %.1f minutes",
                (System.nanoTime() - start) / 60e9));
        System.exit(0);
    }

    private static Density.Result rename(Density.Result r, String server) {
        return new Density.Result(server, r.dialect(), r.connections(), r.heapBefore(), r.heapAfter(), r.rssBefore(),
                r.rssAfter(), r.openSeconds());
    }

    static void log(String message) {
        System.out.println(LocalTime.now().format(DateTimeFormatter.ofPattern("HH:mm:ss")) + " " + message);
        System.out.flush();
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            fail(message);
        }
    }

    private static void fail(String message) {
        System.err.println("bench: " + message);
        System.err.print(USAGE);
        System.exit(2);
    }
}
