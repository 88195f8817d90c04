package dev.switchboard.bench;

import dev.switchboard.bench.jmh.DecodeBenchmark;
import dev.switchboard.bench.jmh.EventBenchmark;
import dev.switchboard.bench.jmh.TextDeltaBenchmark;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.WireAdapter;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Runs the JMH codec benchmarks and collects their figures for the report. */
public final class CodecBench {

    /**
     * How long JMH measures: iterations and their length, for the hot path and for the rest, and
     * forks (0 runs in this JVM: only for the smoke run, whose figures mean nothing); and how many
     * calls the CPU-time measurement warms up with and measures, in batches.
     */
    public record Settings(int forks, int hotWarmups, int hotIterations, int hotMillis, int coldWarmups,
                           int coldIterations, int coldMillis, int allocationRounds, int cpuWarmupCalls,
                           int cpuBatches, int cpuBatchCalls) {
        public static Settings full() {
            return new Settings(1, 2, 3, 1000, 1, 2, 150, 5_000, 300_000, 5, 200_000);
        }

        public static Settings smoke() {
            return new Settings(0, 1, 1, 200, 0, 1, 20, 200, 2_000, 3, 2_000);
        }

        double cpu(java.util.function.LongSupplier op, int scale) {
            return CpuTimer.nanosPerCall(op, cpuWarmupCalls / scale, cpuBatches, cpuBatchCalls / scale);
        }
    }

    /**
     * A JMH score: mean ns/op, its 99.9% error, the median (of the samples in sample mode, else of
     * the iterations), and bytes allocated per op; {@code cpuNs} is the CPU time per op of
     * {@link CpuTimer}, NaN where it was not taken.
     */
    public record Score(double ns, double error, double median, double allocBytes, double cpuNs) {
        Score withCpu(double cpu) {
            return new Score(ns, error, median, allocBytes, cpu);
        }
    }

    /**
     * {@code encoder}: into {@link BufferFrameWriter}'s one buffer; {@code server}: through the
     * gateway's own writer.
     */
    public record TextDeltaRow(Dialect dialect, Score encoder, Score server, Score naive, long wireBytes) {
        /** Naive ÷ encoder, in CPU time per op. */
        public double speedup() {
            return naive.cpuNs() / encoder.cpuNs();
        }
    }

    /** One event in one dialect; {@code score} is null when the dialect writes nothing for it. */
    public record EventRow(Dialect dialect, Event.Kind kind, long frames, long wireBytes, double allocBytes,
                           Score score) {
    }

    public record DecodeRow(String message, Score score) {
    }

    public record Results(List<TextDeltaRow> textDelta, List<EventRow> events, List<DecodeRow> decode) {
    }

    private final Settings settings;
    private final Path workDir;

    public CodecBench(Settings settings, Path workDir) {
        this.settings = settings;
        this.workDir = workDir;
    }

    public Results run() throws RunnerException {
        String[] dialects = Arrays.stream(Dialect.values()).map(d -> d.id).toArray(String[]::new);

        BenchSuite.log("JMH: text delta, encoder, the gateway's writer and naive baseline, 5 dialects");
        Collection<RunResult> hot = jmh(TextDeltaBenchmark.class, "textdelta", settings.hotWarmups(), settings.hotIterations(),
                settings.hotMillis(), "dialect", dialects);
        BenchSuite.log("CPU time per op: text delta");
        List<TextDeltaRow> textDelta = new ArrayList<>();
        for (Dialect d : Dialect.values()) {
            try (TextDeltaCase c = new TextDeltaCase(d)) {
                double encode = settings.cpu(() -> io(c::encode), 1);
                double server = settings.cpu(() -> io(c::encodeServerWriter), 1);
                double naive = settings.cpu(() -> io(() -> c.naive().length), 1);
                textDelta.add(new TextDeltaRow(d, score(hot, "encode", "dialect", d.id).withCpu(encode),
                        score(hot, "encodeServerWriter", "dialect", d.id).withCpu(server),
                        score(hot, "naive", "dialect", d.id).withCpu(naive), wire(d, Event.Kind.TEXT_DELTA)[1]));
            }
        }

        BenchSuite.log("JMH: decode, every inbound message of every dialect");
        String[] messages = InboundSamples.keys();
        Collection<RunResult> dec = jmh(DecodeBenchmark.class, "decode", settings.hotWarmups(),
                settings.hotIterations(), settings.hotMillis() / 2, "message", messages);
        BenchSuite.log("CPU time per op: decode");
        List<DecodeRow> decode = new ArrayList<>();
        for (String msg : messages) {
            Dialect d = InboundSamples.dialect(msg);
            DialectSession session = d.newSession(d.adapter(), EventSamples.CONVERSATION);
            String text = InboundSamples.text(msg);
            double cpu = settings.cpu(() -> session.decode(text) instanceof Decoded.Commands c ? c.commands().size() : -1, 4);
            decode.add(new DecodeRow(msg, score(dec, "decode", "message", msg).withCpu(cpu)));
        }

        List<String> targets = new ArrayList<>();
        Map<String, long[]> wire = new LinkedHashMap<>();
        for (Event.Kind kind : Event.Kind.values()) {
            for (Dialect d : Dialect.values()) {
                long[] fw = wire(d, kind);
                wire.put(d.id + "/" + kind, fw);
                if (fw[0] > 0) {
                    targets.add(d.id + "/" + kind);
                }
            }
        }
        BenchSuite.log("JMH: every event kind in every dialect that writes something for it (" + targets.size() + ")");
        Collection<RunResult> cold = jmh(EventBenchmark.class, "events", settings.coldWarmups(),
                settings.coldIterations(), settings.coldMillis(), "target", targets.toArray(String[]::new));
        List<EventRow> events = new ArrayList<>();
        for (Event.Kind kind : Event.Kind.values()) {
            for (Dialect d : Dialect.values()) {
                String key = d.id + "/" + kind;
                long[] fw = wire.get(key);
                Score s = fw[0] > 0 ? score(cold, "encode", "target", key) : null;
                events.add(new EventRow(d, kind, fw[0], fw[1], allocatedPerEvent(d, kind, settings.allocationRounds()), s));
            }
        }
        return new Results(textDelta, events, decode);
    }

    private Collection<RunResult> jmh(Class<?> benchmark, String name, int warmups, int iterations, int millis,
                                      String param, String... values) throws RunnerException {
        ChainedOptionsBuilder o = new OptionsBuilder()
                .include(benchmark.getName() + "\\.")
                .param(param, values)
                .forks(settings.forks())
                .jvmArgs("-Xms1g", "-Xmx1g")
                .shouldFailOnError(true)
                .addProfiler(GCProfiler.class)
                .resultFormat(ResultFormatType.JSON)
                .result(workDir.resolve("jmh-" + name + ".json").toString())
                .output(workDir.resolve("jmh-" + name + ".log").toString())
                .warmupIterations(warmups)
                .warmupTime(TimeValue.milliseconds(millis))
                .measurementIterations(iterations)
                .measurementTime(TimeValue.milliseconds(millis));
        return new Runner(o.build()).run();
    }

    private static Score score(Collection<RunResult> results, String method, String param, String value) {
        for (RunResult r : results) {
            if (r.getParams().getBenchmark().endsWith("." + method) && value.equals(r.getParams().getParam(param))) {
                Result<?> primary = r.getPrimaryResult();
                Result<?> alloc = r.getSecondaryResults().get("gc.alloc.rate.norm");
                return new Score(primary.getScore(), primary.getScoreError(), primary.getStatistics().getPercentile(50),
                        alloc == null ? Double.NaN : alloc.getScore(), Double.NaN);
            }
        }
        throw new IllegalStateException("no JMH result for " + method + " " + param + "=" + value);
    }

    /** An I/O call as a number, for {@link CpuTimer}. */
    private interface IoCall {
        long call() throws IOException;
    }

    private static long io(IoCall call) {
        try {
            return call.call();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Frames and bytes the dialect writes for one event of this kind, in a session prepared for it. */
    static long[] wire(Dialect d, Event.Kind kind) {
        WireAdapter adapter = d.adapter();
        DialectSession session = d.newSession(adapter, EventSamples.CONVERSATION);
        try (BufferFrameWriter before = BufferFrameWriter.counting(d);
             BufferFrameWriter out = BufferFrameWriter.counting(d)) {
            long seq = EventSamples.prepare(session, d, kind, before);
            session.encode(EventSamples.envelope(EventSamples.sample(kind), seq), out);
            return new long[] {out.frames(), out.bytes()};
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Bytes allocated encoding one event, counted exactly by the JVM's per-thread allocation
     * counter around the encode alone (JMH's GC profiler would also count the fresh session each
     * invocation gets). Taken after the code is warm, so it allocates what it allocates in use.
     */
    static double allocatedPerEvent(Dialect d, Event.Kind kind, int rounds) {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        WireAdapter adapter = d.adapter();
        Envelope event = EventSamples.envelope(EventSamples.sample(kind), EventSamples.before(kind, d).size() + 1);
        long total = 0;
        long overhead = 0;
        try (BufferFrameWriter out = BufferFrameWriter.counting(d)) {
            for (int pass = 0; pass < 2; pass++) {
                total = 0;
                overhead = 0;
                for (int i = 0; i < rounds; i++) {
                    DialectSession session = d.newSession(adapter, EventSamples.CONVERSATION);
                    EventSamples.prepare(session, d, kind, out);
                    long a = threads.getCurrentThreadAllocatedBytes();
                    long b = threads.getCurrentThreadAllocatedBytes();
                    session.encode(event, out);
                    long c = threads.getCurrentThreadAllocatedBytes();
                    overhead += b - a;
                    total += c - b;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Math.max(0, (total - overhead) / (double) rounds);
    }
}
