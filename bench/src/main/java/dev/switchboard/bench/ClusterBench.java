package dev.switchboard.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

/**
 * The cluster phase: the end-to-end phase's AG-UI WebSocket workload through two gateway nodes that
 * share a PostgreSQL and a Redis, every conversation's runs executed on node B and read by a client
 * joined to the conversation on node A, against the same workload on one gateway alone (on the same
 * PostgreSQL), and on node B alone while both are in the cluster. Each conversation has a connection that
 * starts its runs and a measured one that reads them ({@link LoadClient#openPairs}), in every setup; each
 * setup's conversations are set up once and measured again and again.
 */
public final class ClusterBench {
    /** One gateway with no cluster, on its own database of the same PostgreSQL: both connections to it. */
    public static final String ONE_NODE = "one node";
    /** Both connections to node B of the two-node cluster (node A idle). */
    public static final String SAME_NODE = "cluster, same node";
    /** The starter on node B, the reader on node A. */
    public static final String ACROSS = "cluster, across nodes";
    static final List<String> SETUPS = List.of(ONE_NODE, SAME_NODE, ACROSS);

    /**
     * What to run: conversations, chunks per run, frames per point, rounds, each point's limit, whether
     * every setup is warmed up (at half the frames) before the rounds, and the paced point: at most how
     * many of the conversations (fewer if they would start fewer than three runs each), for about how long.
     */
    public record Settings(int conversations, int chunks, long framesPerPoint, int rounds, Duration limit,
                           boolean warmUp, int pacedConversations, Duration pacedFor, int clientThreads,
                           List<String> serverJvmArgs) {
        public static Settings full(int clientThreads, List<String> serverJvmArgs) {
            return new Settings(1000, 100, 200_000, 2, Duration.ofSeconds(30), true, 100, Duration.ofSeconds(4),
                    clientThreads, serverJvmArgs);
        }

        public static Settings smoke(int clientThreads, List<String> serverJvmArgs) {
            return new Settings(20, 20, 3_000, 1, Duration.ofSeconds(20), false, 10, Duration.ofSeconds(1),
                    clientThreads, serverJvmArgs);
        }
    }

    /**
     * One measurement of one setup: what the readers got ({@code result}, whose server figures are the
     * gateway nodes' together: CPU summed, the larger peak RSS), and the CPU seconds of Redis, of
     * PostgreSQL (its server and backends) and of other processes meanwhile.
     */
    public record Point(String setup, LoadResult result, double redisCpuSeconds, double postgresCpuSeconds) {
        /** Gateway CPU (every node of the setup) per event a reader received, in µs. */
        public double nodeCpuMicrosPerEvent() {
            return result.frames() == 0 ? Double.NaN : result.serverStats().cpuSeconds() * 1e6 / result.frames();
        }

        /** Gateway, Redis and PostgreSQL CPU per event a reader received, in µs. */
        public double allCpuMicrosPerEvent() {
            return result.frames() == 0 ? Double.NaN
                    : (result.serverStats().cpuSeconds() + redisCpuSeconds + postgresCpuSeconds) * 1e6 / result.frames();
        }
    }

    /**
     * Every closed-loop measurement in the order taken, the paced one of each setup at {@code pacedRate}
     * events/s offered, what ran them, and how many lines of the cluster nodes' logs over the phase said
     * that an event did not reach the cluster (its publish to Redis failed or timed out) or that the
     * cluster was unavailable (Redis did not answer the health check's PING in time).
     */
    public record Results(Settings settings, List<Point> points, List<Point> paced, double pacedRate,
                          String postgres, String redis, long unpublishedLogged, long unavailableLogged,
                          double otherCpuSeconds, double wallSeconds) {
        public List<Point> of(String setup) {
            return points.stream().filter(p -> p.setup().equals(setup)).toList();
        }

        public double mean(String setup, java.util.function.ToDoubleFunction<Point> f) {
            return of(setup).stream().mapToDouble(f).average().orElse(Double.NaN);
        }

        public double eventsPerSecond(String setup) {
            return mean(setup, p -> p.result().eventsPerSecond());
        }

        /** Gateway CPU over the events received, over every measurement of the setup, in µs. */
        public double nodeCpuMicrosPerEvent(String setup) {
            double cpu = of(setup).stream().mapToDouble(p -> p.result().serverStats().cpuSeconds()).sum();
            long frames = of(setup).stream().mapToLong(p -> p.result().frames()).sum();
            return frames == 0 ? Double.NaN : cpu * 1e6 / frames;
        }

        /** Gateway, Redis and PostgreSQL CPU over the events received, over every measurement of the setup, in µs. */
        public double allCpuMicrosPerEvent(String setup) {
            double cpu = of(setup).stream().mapToDouble(p -> p.result().serverStats().cpuSeconds()
                    + p.redisCpuSeconds() + p.postgresCpuSeconds()).sum();
            long frames = of(setup).stream().mapToLong(p -> p.result().frames()).sum();
            return frames == 0 ? Double.NaN : cpu * 1e6 / frames;
        }
    }

    private final Settings settings;
    private final Path workDir;
    private final Path gatewayJar;
    private final String java;

    public ClusterBench(Settings settings, Path workDir, Path gatewayJar, String java) {
        this.settings = settings;
        this.workDir = workDir;
        this.gatewayJar = gatewayJar;
        this.java = java;
    }

    /**
     * Back-to-back runs enough for about {@code frames} frames in all, at least {@code minRuns} and at most
     * 200 a conversation.
     */
    LoadPlan plan(long frames, int minRuns) {
        int perRun = EndToEnd.framesPerRun(Dialect.AGUI_WS, settings.chunks());
        long runs = Math.max(minRuns, Math.min(200, -Math.floorDiv(-frames, (long) settings.conversations() * perRun)));
        return new LoadPlan(Dialect.AGUI_WS, settings.conversations(), (int) runs, settings.chunks(), Duration.ZERO,
                settings.limit());
    }

    public Results run() throws Exception {
        long wallStart = System.nanoTime();
        BenchSuite.log("cluster: starting PostgreSQL and Redis");
        try (ClusterBackends backends = ClusterBackends.start(workDir);
             LoadClient client = new LoadClient(settings.clientThreads())) {
            String postgres = backends.postgresDescription();
            String redis = backends.redisDescription();
            BenchSuite.log("cluster: " + postgres + "; " + redis);
            double[] otherCpu = {0};
            List<Point> points = new ArrayList<>();
            List<Point> paced = new ArrayList<>();
            double rate = run(backends, client, points, paced, otherCpu);
            return new Results(settings, points, paced, rate, postgres, redis,
                    logged(" did not reach the cluster"), logged("cluster unavailable"), otherCpu[0],
                    (System.nanoTime() - wallStart) / 1e9);
        }
    }

    /**
     * Starts the nodes, measures every setup, and stops the nodes (before what they share); the paced
     * point's offered events/s.
     */
    private double run(ClusterBackends backends, LoadClient client, List<Point> points, List<Point> paced,
                       double[] otherCpu) throws Exception {
        Map<String, LoadClient.Pairs> pairs = new HashMap<>();
        ServerProcess one = null;
        ServerProcess a = null;
        ServerProcess b = null;
        try {
            String clusterStore = backends.newDatabase("bench_cluster");
            String oneStore = backends.newDatabase("bench_one");
            // The three JVMs start at once, each on a port of its own.
            int[] ports = ServerProcess.freePorts(3);
            ExecutorService starting = Executors.newFixedThreadPool(3);
            try {
                Future<ServerProcess> fa = starting.submit(() -> EndToEnd.startGateway(java, gatewayJar,
                        settings.serverJvmArgs(), workDir, "cluster-a", List.of("--store-url", clusterStore,
                                "--cluster-redis-url", backends.redisUrl(), "--node-id", "a"), ports[0]));
                Future<ServerProcess> fb = starting.submit(() -> EndToEnd.startGateway(java, gatewayJar,
                        settings.serverJvmArgs(), workDir, "cluster-b", List.of("--store-url", clusterStore,
                                "--cluster-redis-url", backends.redisUrl(), "--node-id", "b"), ports[1]));
                Future<ServerProcess> fo = starting.submit(() -> EndToEnd.startGateway(java, gatewayJar,
                        settings.serverJvmArgs(), workDir, "cluster-one", List.of("--store-url", oneStore), ports[2]));
                List<ServerProcess> up = started(List.of(fa, fb, fo));
                a = up.get(0);
                b = up.get(1);
                one = up.get(2);
            } finally {
                starting.shutdown();
            }
            Nodes nodes = new Nodes(one, a, b, backends);
            for (String setup : SETUPS) {
                long t = System.nanoTime();
                int runPort = setup.equals(ONE_NODE) ? one.port : b.port;
                int readPort = setup.equals(ACROSS) ? a.port : runPort;
                LoadClient.Pairs p = client.openPairs(runPort, readPort, settings.conversations());
                pairs.put(setup, p);
                BenchSuite.log(String.format("cluster: %,d conversations of %s set up in %.1f s (%s)",
                        settings.conversations(), setup, (System.nanoTime() - t) / 1e9, p.setUpTimes()));
            }

            // The JITs need a while: every setup once at half the frames (one run a conversation at least)
            // before measuring.
            for (String setup : settings.warmUp() ? SETUPS : List.<String>of()) {
                BenchSuite.log("cluster: warming up " + setup);
                measure(pairs.get(setup), nodes, setup, plan(settings.framesPerPoint() / 2, 1), otherCpu);
            }
            for (int round = 0; round < settings.rounds(); round++) {
                List<String> order = new ArrayList<>(SETUPS);
                if (round % 2 == 1) {
                    Collections.reverse(order);
                }
                for (String setup : order) {
                    Point p = measure(pairs.get(setup), nodes, setup, plan(settings.framesPerPoint(), 2), otherCpu);
                    points.add(p);
                    LoadResult r = p.result();
                    BenchSuite.log(String.format("%s  node CPU %.1f µs/event, Redis %.1fs, PostgreSQL %.1fs",
                            r.summary(), p.nodeCpuMicrosPerEvent(), p.redisCpuSeconds(), p.postgresCpuSeconds()));
                    if (r.frames() < r.runs() * settings.chunks()) {
                        throw new IllegalStateException("the readers counted " + r.frames() + " frames in " + r.runs()
                                + " runs of " + settings.chunks() + " chunks each (" + setup + ")");
                    }
                }
            }

            // Latency away from saturation: every setup at the same offered load, half the slowest one's peak.
            Results sofar = new Results(settings, points, List.of(), 0, "", "", 0, 0, 0, 0);
            double rate = SETUPS.stream().mapToDouble(sofar::eventsPerSecond).min().orElseThrow() / 2;
            int perRun = EndToEnd.framesPerRun(Dialect.AGUI_WS, settings.chunks());
            // At most pacedConversations, and few enough that each starts a run at least three times in pacedFor.
            int conversations = (int) Math.max(1, Math.min(Math.min(settings.pacedConversations(),
                    settings.conversations()), rate * settings.pacedFor().toNanos() / 3e9 / perRun));
            long intervalNanos = (long) (1e9 * conversations * perRun / rate);
            int runs = (int) Math.max(3, settings.pacedFor().toNanos() / intervalNanos);
            LoadPlan plan = new LoadPlan(Dialect.AGUI_WS, conversations, runs, settings.chunks(),
                    Duration.ofNanos(intervalNanos), settings.limit());
            BenchSuite.log(String.format("cluster: half the slowest setup's peak: %,.0f events/s, each of %d "
                    + "conversations a run every %.1f ms", rate, conversations, intervalNanos / 1e6));
            for (String setup : SETUPS) {
                Point p = measure(pairs.get(setup), nodes, setup, plan, otherCpu);
                paced.add(p);
                BenchSuite.log(String.format("%s  node CPU %.1f µs/event", p.result().summary(),
                        p.nodeCpuMicrosPerEvent()));
            }
            return rate;
        } finally {
            pairs.values().forEach(LoadClient.Pairs::close);
            for (ServerProcess s : new ServerProcess[] {b, a, one}) {
                if (s != null) {
                    s.close();
                }
            }
        }
    }

    /** The servers these starts gave; if one did not start, the others are stopped and its reason thrown. */
    private static List<ServerProcess> started(List<Future<ServerProcess>> starts) throws Exception {
        List<ServerProcess> up = new ArrayList<>();
        Exception failed = null;
        for (Future<ServerProcess> f : starts) {
            try {
                up.add(f.get());
            } catch (ExecutionException e) {
                failed = failed != null ? failed : e.getCause() instanceof Exception cause ? cause : e;
            }
        }
        if (failed != null) {
            up.forEach(ServerProcess::close);
            throw failed;
        }
        return up;
    }

    /** Lines of the cluster nodes' logs that contain {@code text}. */
    private long logged(String text) throws IOException {
        long n = 0;
        for (String node : List.of("cluster-a", "cluster-b")) {
            Path log = workDir.resolve(node + ".log");
            if (Files.isRegularFile(log)) {
                try (Stream<String> lines = Files.lines(log, StandardCharsets.UTF_8)) {
                    n += lines.filter(l -> l.contains(text)).count();
                }
            }
        }
        return n;
    }

    /** The servers of the phase. */
    private record Nodes(ServerProcess one, ServerProcess a, ServerProcess b, ClusterBackends backends) {
    }

    /** Runs one plan in one setup, watching every server's and this process's CPU and memory. */
    private static Point measure(LoadClient.Pairs pairs, Nodes n, String setup, LoadPlan plan, double[] otherCpu)
            throws Exception {
        for (ServerProcess s : List.of(n.one(), n.a(), n.b())) {
            if (!s.alive()) {
                throw new IllegalStateException(s.name + " is no longer running");
            }
        }
        List<ServerProcess> measured = setup.equals(ONE_NODE) ? List.of(n.one()) : List.of(n.a(), n.b());
        long self = ProcessHandle.current().pid();
        long redisPid = n.backends().redisPid();
        long postgresPid = n.backends().postgresPid();
        long postgresBefore = ProcessProbe.treeCpuTicks(postgresPid);
        ProcessProbe probe = ProcessProbe.watch(List.of(n.one().pid(), n.a().pid(), n.b().pid(), redisPid, self));
        LoadResult r = pairs.run(setup, plan);
        if (r.errors() > 0) {
            BenchSuite.log("cluster: " + setup + ": " + r.errors() + " errors, the first: " + pairs.firstError());
        }
        Map<Long, ProcessStats> stats = probe.stop();
        double postgres = ProcessProbe.seconds(ProcessProbe.treeCpuTicks(postgresPid) - postgresBefore);
        double nodesCpu = 0;
        double nodesJit = 0;
        long nodesRss = 0;
        for (ServerProcess s : measured) {
            nodesCpu += stats.get(s.pid()).cpuSeconds();
            nodesJit += stats.get(s.pid()).jitSeconds();
            nodesRss = Math.max(nodesRss, stats.get(s.pid()).peakRssBytes());
        }
        double everyone = postgres;
        for (ProcessStats s : stats.values()) {
            everyone += s.cpuSeconds();
        }
        double other = Math.max(0, probe.machineBusySeconds() - everyone);
        otherCpu[0] += other;
        return new Point(setup, r.with(new ProcessStats(nodesCpu, nodesRss, nodesJit), stats.get(self), other),
                stats.get(redisPid).cpuSeconds(), postgres);
    }
}
