package dev.switchboard.bench;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * The end-to-end measurements: the gateway, the floor and the Node peer started side by side as
 * child processes and loaded in turn by the same client, point by point, in alternating order so
 * that drift of the machine falls on all three alike.
 */
public final class EndToEnd {
    public static final String GATEWAY = "gateway";
    public static final String FLOOR = "floor";
    public static final String PEER = "peer";
    /** A warm-up run after which the JIT took at most this share of a server's CPU ends the warm-up. */
    static final double SETTLED_JIT_SHARE = 0.05;
    /**
     * The most warm-up runs a server gets at one plan. Each 1,000-client run connects every client
     * anew, so code run once per connection or per run reaches the compilers' thresholds only after
     * many runs: the gateway's JIT took 30-40% of its CPU after six and fell to 3-10% after some 25
     * (AG-UI at 1,000 clients, two runs each, on two cores).
     */
    static final int MAX_WARM_RUNS = 24;
    /**
     * The most back-to-back runs one client makes at a closed-loop point: enough that a single
     * client streams the point's 200,000 frames (1,887 runs of 106). At 200 the one-client point
     * lasted 0.05-0.1 s, less than the time between two of the gateway's young collections, so a
     * pause or a slow wake-up could take a fifth of it; the one-client ratio moved from 53% to 73%
     * between runs of unchanged code.
     */
    static final int MAX_RUNS_PER_CLIENT = 2_000;

    /** What to run: client counts, chunks per run, frames per point, rounds, limits. */
    public record Settings(int[] clients, int chunks, long framesPerPoint, int rounds, Duration limit,
                           Duration pacedFor, int clientThreads, List<String> serverJvmArgs) {
        public static Settings full() {
            return new Settings(new int[] {1, 10, 100, 1000}, 100, 200_000, 2, Duration.ofSeconds(60),
                    Duration.ofSeconds(8), 1, List.of());
        }

        public static Settings smoke() {
            return new Settings(new int[] {1, 20}, 20, 5_000, 1, Duration.ofSeconds(20), Duration.ofSeconds(1), 1,
                    List.of());
        }

        int maxClients() {
            return clients[clients.length - 1];
        }
    }

    /** Every measurement, in the order taken. */
    public record Results(List<LoadResult> throughput, List<LoadResult> halfPeak, List<LoadResult> dialects,
                          double peakEventsPerSecond, double otherCpuSeconds, double wallSeconds) {
    }

    private final Settings settings;
    private final Path workDir;
    private final Path gatewayJar;
    private final Path benchJar;
    private final Path nodeDir;
    private final String java;

    public EndToEnd(Settings settings, Path workDir, Path gatewayJar, Path benchJar, Path nodeDir, String java) {
        this.settings = settings;
        this.workDir = workDir;
        this.gatewayJar = gatewayJar;
        this.benchJar = benchJar;
        this.nodeDir = nodeDir;
        this.java = java;
    }

    /** Starts the gateway's jar with the demo agent unpaced, on a fresh data directory. */
    static ServerProcess startGateway(String java, Path jar, List<String> jvmArgs, Path workDir, String name)
            throws Exception {
        return startGateway(java, jar, jvmArgs, workDir, name, List.of());
    }

    /** As {@link #startGateway(String, Path, List, Path, String)}, with these options besides. */
    static ServerProcess startGateway(String java, Path jar, List<String> jvmArgs, Path workDir, String name,
                                      List<String> options) throws Exception {
        return startGateway(java, jar, jvmArgs, workDir, name, options, ServerProcess.freePort());
    }

    /** As {@link #startGateway(String, Path, List, Path, String, List)}, on this port. */
    static ServerProcess startGateway(String java, Path jar, List<String> jvmArgs, Path workDir, String name,
                                      List<String> options, int port) throws Exception {
        Path data = Files.createTempDirectory(workDir, name + "-data");
        List<String> cmd = new ArrayList<>(List.of(java));
        cmd.addAll(jvmArgs);
        cmd.addAll(List.of("-jar", jar.toString(), "--port", Integer.toString(port), "--data-dir", data.toString(),
                "--demo-delay-ms", "0", "--idle-timeout-seconds", "600",
                // Every load client comes from 127.0.0.1 as one anonymous client: lift its per-client
                // limits (runs a minute, open connections) so they measure the gateway, not the limiter.
                "--rate-limit-runs-per-minute", "0", "--max-connections-per-client", "1000000",
                "--max-connections", "1000000"));
        cmd.addAll(options);
        return ServerProcess.start(name, port, cmd, workDir.resolve(name + ".log"), data);
    }

    static ServerProcess startFloor(String java, Path benchJar, List<String> jvmArgs, Path workDir) throws Exception {
        int port = ServerProcess.freePort();
        List<String> cmd = new ArrayList<>(List.of(java));
        cmd.addAll(jvmArgs);
        cmd.addAll(List.of("-cp", benchJar.toString(), FloorServer.class.getName(), "--port", Integer.toString(port),
                "--dialect", Dialect.AGUI_WS.id));
        return ServerProcess.start(FLOOR, port, cmd, workDir.resolve("floor.log"));
    }

    static ServerProcess startPeer(Path nodeDir, Path workDir) throws Exception {
        int port = ServerProcess.freePort();
        return ServerProcess.start(PEER, port, List.of("node", nodeDir.resolve("peer.mjs").toString(), "--port",
                Integer.toString(port)), workDir.resolve("peer.log"));
    }

    /** Frames one run of {@code chunks} sends in this dialect (the demo agent's benchmark answer). */
    static int framesPerRun(Dialect d, int chunks) {
        return chunks + switch (d) {
            case HAI_WS -> 3;
            case AGUI_WS -> 6;
            case AGUI_SSE -> 4;
            case VOICEASSIST_WS -> 2;
            case AGENTSCOPE_SSE -> 7;
        };
    }

    /**
     * Back-to-back runs enough for about {@code frames} frames in all, at least 2 and at most
     * {@value #MAX_RUNS_PER_CLIENT} a client.
     */
    LoadPlan closedPlan(Dialect d, int clients, long frames) {
        long runs = Math.max(2, Math.min(MAX_RUNS_PER_CLIENT,
                -Math.floorDiv(-frames, (long) clients * framesPerRun(d, settings.chunks()))));
        return new LoadPlan(d, clients, (int) runs, settings.chunks(), Duration.ZERO, settings.limit());
    }

    public Results run() throws Exception {
        long wallStart = System.nanoTime();
        List<LoadResult> throughput = new ArrayList<>();
        List<LoadResult> halfPeak = new ArrayList<>();
        List<LoadResult> dialects = new ArrayList<>();
        double[] otherCpu = {0};
        ServerProcess gateway = null;
        ServerProcess floor = null;
        ServerProcess peer = null;
        try (LoadClient client = new LoadClient(settings.clientThreads())) {
            gateway = startGateway(java, gatewayJar, settings.serverJvmArgs(), workDir, GATEWAY);
            floor = startFloor(java, benchJar, settings.serverJvmArgs(), workDir);
            peer = startPeer(nodeDir, workDir);
            List<ServerProcess> servers = List.of(gateway, floor, peer);

            // The gateway's JIT needs a while: warm every server at each client count the points
            // measure, each until its compilers are all but done (see warm). A shape left out of the
            // warm-up is compiled in the first round's point of that shape, and what it compiles
            // there (and deoptimises elsewhere) falls on the points after it.
            for (ServerProcess s : servers) {
                BenchSuite.log("warming up " + s.name);
                for (int clients : IntStream.of(settings.clients()).distinct().sorted().toArray()) {
                    warm(client, s, closedPlan(Dialect.AGUI_WS, clients, settings.framesPerPoint()), otherCpu);
                }
            }

            for (int round = 0; round < settings.rounds(); round++) {
                for (int clients : settings.clients()) {
                    List<ServerProcess> order = new ArrayList<>(servers);
                    if (round % 2 == 1) {
                        Collections.reverse(order);
                    }
                    for (ServerProcess s : order) {
                        LoadResult r = measure(client, s, closedPlan(Dialect.AGUI_WS, clients, settings.framesPerPoint()),
                                otherCpu);
                        throughput.add(r);
                        BenchSuite.log(r.summary());
                    }
                }
            }

            double peak = 0;
            for (int clients : settings.clients()) {
                peak = Math.max(peak, meanEventsPerSecond(throughput, GATEWAY, clients));
            }
            int clients = settings.maxClients();
            int perRun = framesPerRun(Dialect.AGUI_WS, settings.chunks());
            double rate = peak / 2;
            long intervalNanos = (long) (1e9 * clients * perRun / rate);
            int runs = (int) Math.max(3, settings.pacedFor().toNanos() / intervalNanos);
            LoadPlan paced = new LoadPlan(Dialect.AGUI_WS, clients, runs, settings.chunks(),
                    Duration.ofNanos(intervalNanos), settings.limit());
            BenchSuite.log(String.format("half of the gateway's peak: %,.0f events/s, each of %d clients a run every %.1f ms",
                    rate, clients, intervalNanos / 1e6));
            for (ServerProcess s : servers) {
                LoadResult r = measure(client, s, paced, otherCpu);
                halfPeak.add(r);
                BenchSuite.log(r.summary());
                if (r.timeline() != null) {
                    BenchSuite.log(r.timeline().describe(3));
                }
            }

            for (Dialect d : Dialect.values()) {
                warm(client, gateway, closedPlan(d, Math.min(50, clients), settings.framesPerPoint() / 4), otherCpu);
                LoadResult r = measure(client, gateway, closedPlan(d, clients, settings.framesPerPoint()), otherCpu);
                dialects.add(r);
                BenchSuite.log(r.summary());
                if (r.frames() < r.runs() * settings.chunks()) {
                    // Every run streams its chunks: fewer frames means the client no longer reads the dialect.
                    throw new IllegalStateException("the load client counted " + r.frames() + " frames of "
                            + d.id + " in " + r.runs() + " runs of " + settings.chunks() + " chunks each");
                }
            }
            return new Results(throughput, halfPeak, dialects, peak, otherCpu[0], (System.nanoTime() - wallStart) / 1e9);
        } finally {
            for (ServerProcess s : new ServerProcess[] {peer, floor, gateway}) {
                if (s != null) {
                    s.close();
                }
            }
        }
    }

    /**
     * Runs {@code plan} against {@code server} again while the server's JIT compilers took more than
     * {@value #SETTLED_JIT_SHARE} of its CPU in the last run, at most {@value #MAX_WARM_RUNS} times:
     * compiling is a cost a server pays once, and on two cores its compiler threads take the
     * cores from the work measured after it. A server that is not a JVM shows no JIT time and is run
     * once. Each server gets the same rule.
     */
    private static void warm(LoadClient client, ServerProcess server, LoadPlan plan, double[] otherCpu)
            throws InterruptedException {
        for (int i = 1; i <= MAX_WARM_RUNS; i++) {
            LoadResult r = measure(client, server, plan, otherCpu);
            double share = r.serverStats().cpuSeconds() == 0 ? 0
                    : r.serverStats().jitSeconds() / r.serverStats().cpuSeconds();
            if (share <= SETTLED_JIT_SHARE) {
                return;
            }
            BenchSuite.log(String.format(Locale.ROOT, "  %s %s at %d clients: JIT %.1f of %.1f s CPU, warming again",
                    server.name, plan.dialect().id, plan.clients(), r.serverStats().jitSeconds(),
                    r.serverStats().cpuSeconds()));
        }
    }

    /** Runs one plan against one server, watching the server's and this process's CPU and memory. */
    private static LoadResult measure(LoadClient client, ServerProcess server, LoadPlan plan, double[] otherCpu)
            throws InterruptedException {
        if (!server.alive()) {
            throw new IllegalStateException(server.name + " is no longer running");
        }
        long self = ProcessHandle.current().pid();
        ProcessProbe probe = ProcessProbe.watch(List.of(server.pid(), self));
        long[] gc = clientGc();
        LoadResult r = client.run(server.name, server.port, plan);
        long[] gcAfter = clientGc();
        Map<Long, ProcessStats> stats = probe.stop();
        double other = Math.max(0, probe.machineBusySeconds() - stats.get(server.pid()).cpuSeconds()
                - stats.get(self).cpuSeconds());
        otherCpu[0] += other;
        return r.with(stats.get(server.pid()), stats.get(self), other)
                .withClientGc(gcAfter[0] - gc[0], gcAfter[1] - gc[1]);
    }

    /** The collections of this JVM (the load generator's) so far, and their milliseconds. */
    static long[] clientGc() {
        long count = 0;
        long millis = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, gc.getCollectionCount());
            millis += Math.max(0, gc.getCollectionTime());
        }
        return new long[] {count, millis};
    }

    /** The mean events/s of a server's closed-loop measurements at this many clients. */
    public static double meanEventsPerSecond(List<LoadResult> results, String server, int clients) {
        return results.stream().filter(r -> r.server().equals(server) && r.plan().clients() == clients)
                .mapToDouble(LoadResult::eventsPerSecond).average().orElse(Double.NaN);
    }
}
