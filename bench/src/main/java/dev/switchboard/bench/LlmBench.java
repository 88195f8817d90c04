package dev.switchboard.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The LLM phase: the scripted model server in this process, the gateway's jar as a child process
 * with {@code --runtime openai} pointed at it, and conversations reading answers directly from the
 * model and through the gateway (HAI over WebSocket, AG-UI over SSE) in turn, at each concurrency,
 * as fast as the model can write and at a model's pace. What the gateway adds is the difference
 * between the two at the same concurrency; its CPU time per token is its own process's.
 */
public final class LlmBench {
    /** Warm-ups at most; each of a paced and an unpaced pass (see {@link #warm}). */
    private static final int MAX_WARM_RUNS = 4;
    /**
     * Answers of {@value #WARM_RUN_TOKENS} tokens each gateway path gives first in the warm-up, so that
     * the code of a run's start and end, which runs once an answer, is compiled as a gateway that has
     * served for a while has it (see {@link #warm}).
     */
    private static final int WARM_RUN_STARTS = 6_000;
    static final int WARM_RUN_TOKENS = 2;
    /**
     * Follow-up turns each conversation of the warm-up asks for after its first: short of the most
     * history messages the gateway keeps in memory (64), so every one starts from memory.
     */
    static final int WARM_FOLLOW_UPS = 30;
    /**
     * What to run: the concurrencies, tokens per answer, and at each concurrency an unpaced point of
     * at least {@code minAnswers} answers and {@code rounds} per conversation, then a paced point of
     * at least {@code pacedMinAnswers} answers and {@code pacedRounds} per conversation.
     */
    public record Settings(int[] concurrency, int tokens, int minAnswers, int rounds, double pacedTokensPerSecond,
                           int pacedMinAnswers, int pacedRounds, Duration limit, List<String> serverJvmArgs) {
        public static Settings full(List<String> serverJvmArgs) {
            return new Settings(new int[] {1, 100}, 200, 50, 2, 50, 4, 6, Duration.ofSeconds(90), serverJvmArgs);
        }

        public static Settings smoke(List<String> serverJvmArgs) {
            return new Settings(new int[] {1, 2}, 20, 4, 2, 50, 1, 1, Duration.ofSeconds(20), serverJvmArgs);
        }

        int maxConcurrency() {
            return concurrency[concurrency.length - 1];
        }

        int answersPerClient(int clients) {
            return Math.max(rounds, -Math.floorDiv(-minAnswers, clients));
        }

        int pacedAnswersPerClient(int clients) {
            return Math.max(pacedRounds, -Math.floorDiv(-pacedMinAnswers, clients));
        }
    }

    /**
     * One measured point, with the gateway's CPU seconds over it and the part its JIT compilers took
     * (NaN for the direct path), and the seconds the threads of the gateway (NaN for the direct path)
     * and of this process (the clients and the model) waited for a core, ready to run.
     */
    public record Point(LlmClient.Result result, double gatewayCpuSeconds, double gatewayJitSeconds,
                        double gatewayWaitSeconds, double suiteWaitSeconds) {
        public String path() {
            return result.path().id;
        }

        public int clients() {
            return result.clients();
        }

        public boolean paced() {
            return result.tokensPerSecond() > 0;
        }

        /** Whether its answers were the follow-up turns of conversations (see {@link LlmClient}). */
        public boolean followUps() {
            return result.followUps();
        }

        public double ttftMillis(double percentile) {
            return millis(result.ttft(), percentile);
        }

        public double perTokenMillis(double percentile) {
            return millis(result.perToken(), percentile);
        }

        /** The first token's leg from the client's send to the model's write of it, in ms. */
        public double ttftAskMillis(double percentile) {
            return millis(result.ttftAsk(), percentile);
        }

        /** The first token's leg from the model's write of it to the client's read, in ms. */
        public double ttftBringMillis(double percentile) {
            return millis(result.ttftBring(), percentile);
        }

        /** Gateway CPU microseconds per token delivered. */
        public double cpuMicrosPerToken() {
            return perToken(gatewayCpuSeconds);
        }

        /** Microseconds the gateway's threads waited for a core, ready to run, per token delivered. */
        public double gatewayWaitMicrosPerToken() {
            return perToken(gatewayWaitSeconds);
        }

        /** Microseconds the clients' and the model's threads waited for a core, per token delivered. */
        public double suiteWaitMicrosPerToken() {
            return perToken(suiteWaitSeconds);
        }

        private double perToken(double seconds) {
            return result.tokensReceived() == 0 ? Double.NaN : seconds * 1e6 / result.tokensReceived();
        }

        private static double millis(org.HdrHistogram.Histogram h, double percentile) {
            return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e6;
        }
    }

    /** Every point in the order taken. */
    public record Results(Settings settings, List<Point> points) {
        /** The direct point of the same concurrency and pace as {@code p}. */
        public Point direct(Point p) {
            return points.stream().filter(d -> d.result().path() == LlmClient.Path.DIRECT
                    && d.clients() == p.clients() && d.paced() == p.paced() && d.followUps() == p.followUps())
                    .findFirst().orElse(null);
        }

        /** Time to first token at this percentile through the gateway minus directly, in ms. */
        public double addedTtftMillis(Point p, double percentile) {
            Point d = direct(p);
            return d == null ? Double.NaN : p.ttftMillis(percentile) - d.ttftMillis(percentile);
        }

        /** The gateway points of the highest concurrency, paced or not, each answer in a new conversation. */
        public List<Point> atMost(boolean paced) {
            return points.stream().filter(p -> p.result().path() != LlmClient.Path.DIRECT && p.paced() == paced
                    && !p.followUps() && p.clients() == settings.maxConcurrency()).toList();
        }

        /** The gateway points of follow-up turns (paced, at the highest concurrency). */
        public List<Point> followUps() {
            return points.stream().filter(p -> p.result().path() != LlmClient.Path.DIRECT && p.followUps()).toList();
        }
    }

    private final Settings settings;
    private final Path workDir;
    private final Path gatewayJar;
    private final String java;

    public LlmBench(Settings settings, Path workDir, Path gatewayJar, String java) {
        this.settings = settings;
        this.workDir = workDir;
        this.gatewayJar = gatewayJar;
        this.java = java;
    }

    public Results run() throws Exception {
        List<Point> points = new ArrayList<>();
        LlmClient client = new LlmClient();
        try (ScriptedModel model = ScriptedModel.start(settings.tokens());
             ServerProcess gateway = EndToEnd.startGateway(java, gatewayJar, settings.serverJvmArgs(), workDir,
                     "llm-gateway", List.of("--runtime", "openai", "--openai-base-url", model.baseUrl(),
                             "--model", ScriptedModel.MODEL))) {
            BenchSuite.log("llm: scripted model at " + model.baseUrl() + ", gateway --runtime openai on port "
                    + gateway.port);
            double rate = settings.pacedTokensPerSecond();
            Duration answer = Duration.ofNanos((long) (settings.tokens() * 1e9 / rate));
            warm(client, model, gateway, rate, answer);
            model.script(settings.tokens(), 0);
            for (int clients : settings.concurrency()) {
                for (LlmClient.Path path : LlmClient.Path.values()) {
                    points.add(log(measure(client, model, gateway, path, clients, settings.answersPerClient(clients),
                            0, Duration.ZERO, false), points));
                }
            }
            // A model's pace: the conversations start at random within one answer's time, so that from the
            // second answer on all of them stream at once, as many conversations do.
            model.script(settings.tokens(), rate);
            for (int clients : settings.concurrency()) {
                for (LlmClient.Path path : LlmClient.Path.values()) {
                    points.add(log(measure(client, model, gateway, path, clients,
                            settings.pacedAnswersPerClient(clients), rate, clients == 1 ? Duration.ZERO : answer, false),
                            points));
                }
            }
            // A chat's next turns: the same, each answer the next turn of its client's conversation, after a
            // first turn not counted (the gateway then holds the short history in memory).
            int most = settings.maxConcurrency();
            for (LlmClient.Path path : LlmClient.Path.values()) {
                points.add(log(measure(client, model, gateway, path, most, settings.pacedAnswersPerClient(most), rate,
                        most == 1 ? Duration.ZERO : answer, true), points));
            }
        }
        return new Results(settings, points);
    }

    /**
     * Warms the gateway's JIT at the highest concurrency, every path unpaced and then paced (tokens
     * one at a time run other code than bursts do), again while its compilers took more than
     * {@link EndToEnd#SETTLED_JIT_SHARE} of its CPU, at most {@value #MAX_WARM_RUNS} times: compiling is a
     * cost the gateway pays once, and on two cores it takes them from the points measured after it.
     */
    private void warm(LlmClient client, ScriptedModel model, ServerProcess gateway, double rate, Duration answer)
            throws InterruptedException {
        int most = settings.maxConcurrency();
        // A run's start, its model request and its end run once an answer: the passes below, of whole
        // answers, run them some 1,200 times a path, short of what C2 compiles (bench/NOTES.md, "A run's
        // start runs cold in the phase"). Short answers run them often at little cost first.
        model.script(WARM_RUN_TOKENS, 0);
        int perClient = warmRunStarts(settings) / most;
        // Each of these answers on a new connection to the model: a measured point that follows a quiet
        // spell opens one for each conversation, the model having closed those idle past its limit
        // (bench/NOTES.md, "What a new conversation's first token waits for").
        model.closeAfterEachAnswer(true);
        for (LlmClient.Path path : LlmClient.Path.values()) {
            int port = path == LlmClient.Path.DIRECT ? model.port() : gateway.port;
            client.run(path, port, most, perClient, WARM_RUN_TOKENS, 0, Duration.ZERO, settings.limit());
            if (path != LlmClient.Path.DIRECT) {
                // And as the turns of conversations, whose starts take another way (their history in memory).
                client.run(path, port, most, Math.min(perClient, WARM_FOLLOW_UPS), WARM_RUN_TOKENS, 0,
                        Duration.ZERO, settings.limit(), true);
            }
        }
        model.closeAfterEachAnswer(false);
        for (int i = 1; i <= MAX_WARM_RUNS; i++) {
            double cpu = 0;
            double jit = 0;
            model.script(settings.tokens(), 0);
            for (LlmClient.Path path : LlmClient.Path.values()) {
                Point p = measure(client, model, gateway, path, most, settings.answersPerClient(most), 0, Duration.ZERO,
                        false);
                cpu += path == LlmClient.Path.DIRECT ? 0 : p.gatewayCpuSeconds();
                jit += path == LlmClient.Path.DIRECT ? 0 : p.gatewayJitSeconds();
            }
            model.script(settings.tokens(), rate);
            for (LlmClient.Path path : LlmClient.Path.values()) {
                if (path != LlmClient.Path.DIRECT) {
                    Point p = measure(client, model, gateway, path, most, 1, rate, answer, false);
                    cpu += p.gatewayCpuSeconds();
                    jit += p.gatewayJitSeconds();
                }
            }
            if (cpu == 0 || jit / cpu <= EndToEnd.SETTLED_JIT_SHARE) {
                return;
            }
            BenchSuite.log(String.format(Locale.ROOT, "  llm gateway at %d conversations: JIT %.1f of %.1f s CPU, "
                    + "warming again", most, jit, cpu));
        }
    }

    /** The short answers each gateway path gives first in the warm-up: {@value #WARM_RUN_STARTS}, fewer in a smoke run. */
    static int warmRunStarts(Settings settings) {
        int most = settings.maxConcurrency();
        return most * Math.max(1, Math.min(WARM_RUN_STARTS / most, settings.answersPerClient(most) * 30));
    }

    private Point measure(LlmClient client, ScriptedModel model, ServerProcess gateway, LlmClient.Path path,
                          int clients, int answers, double rate, Duration stagger, boolean followUps)
            throws InterruptedException {
        if (!gateway.alive()) {
            throw new IllegalStateException("the gateway is no longer running; see its log in " + workDir);
        }
        int port = path == LlmClient.Path.DIRECT ? model.port() : gateway.port;
        long self = ProcessHandle.current().pid();
        ProcessProbe probe = ProcessProbe.watch(List.of(gateway.pid(), self));
        LlmClient.Result r = client.run(path, port, clients, answers, settings.tokens(), rate, stagger,
                settings.limit(), followUps);
        Map<Long, ProcessStats> stats = probe.stop();
        if (r.answers() == 0) {
            throw new IllegalStateException("no answer of " + settings.tokens() + " tokens came whole on " + path.id
                    + " (" + r.errors() + " errors); see the gateway's log in " + workDir);
        }
        ProcessStats own = stats.get(gateway.pid());
        boolean direct = path == LlmClient.Path.DIRECT;
        return new Point(r, direct ? Double.NaN : own.cpuSeconds(), direct ? Double.NaN : own.jitSeconds(),
                direct ? Double.NaN : own.runQueueWaitSeconds(), stats.get(self).runQueueWaitSeconds());
    }

    private Point log(Point p, List<Point> earlier) {
        Results sofar = new Results(settings, earlier);
        LlmClient.Result r = p.result();
        String gatewayOnly = p.result().path() == LlmClient.Path.DIRECT ? ""
                : String.format(Locale.ROOT, " added p50=%.2f ms p99=%.2f ms", sofar.addedTtftMillis(p, 50),
                sofar.addedTtftMillis(p, 99));
        String cpu = p.result().path() == LlmClient.Path.DIRECT ? ""
                : String.format(Locale.ROOT, " server cpu=%.1f µs/token", p.cpuMicrosPerToken());
        String jit = p.result().path() == LlmClient.Path.DIRECT ? ""
                : String.format(Locale.ROOT, " jit=%.1fs", p.gatewayJitSeconds());
        String waits = (p.result().path() == LlmClient.Path.DIRECT ? ""
                : String.format(Locale.ROOT, " server runq wait=%.1f µs/token", p.gatewayWaitMicrosPerToken()))
                + String.format(Locale.ROOT, " suite runq wait=%.1f µs/token", p.suiteWaitMicrosPerToken())
                + String.format(Locale.ROOT, " ttft ask p50=%.2f ms p99=%.2f ms bring p50=%.2f ms p99=%.2f ms",
                p.ttftAskMillis(50), p.ttftAskMillis(99), p.ttftBringMillis(50), p.ttftBringMillis(99));
        BenchSuite.log(String.format(Locale.ROOT, "llm %-8s conc=%4d %-7s answers=%4d ttft p50=%.2f ms p99=%.2f ms%s "
                        + "per-token p50=%.2f ms p99=%.2f ms%s errors=%d%s%s%s", p.path(), p.clients(),
                p.followUps() ? "follow" : p.paced() ? "paced" : "unpaced", r.answers(), p.ttftMillis(50), p.ttftMillis(99), gatewayOnly,
                p.perTokenMillis(50), p.perTokenMillis(99), cpu, r.errors(), r.timedOut() ? " TIMED OUT" : "", jit,
                waits));
        return p;
    }
}
