package dev.switchboard.bench.jmh;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * CPU time per op of JMH's worker threads ({@code -prof dev.switchboard.bench.jmh.ThreadCpuProfiler}),
 * as {@code cpu.time.norm}: on a machine shared with other work the wall-clock score also counts
 * the time a worker waited for a core. Normalised by all ops of the iteration, as {@code -prof gc}
 * normalises its allocation.
 */
public final class ThreadCpuProfiler implements InternalProfiler {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final Map<Long, Long> cpuAtStart = new HashMap<>();

    @Override
    public String getDescription() {
        return "CPU time per op of the benchmark's worker threads";
    }

    @Override
    public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
        cpuAtStart.clear();
        cpuAtStart.putAll(workerCpu());
    }

    @Override
    public List<? extends Result<?>> afterIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams,
                                                    IterationResult result) {
        long cpu = 0;
        // A worker is created when the first iteration starts, so it may have no figure from before.
        for (Map.Entry<Long, Long> worker : workerCpu().entrySet()) {
            cpu += worker.getValue() - cpuAtStart.getOrDefault(worker.getKey(), 0L);
        }
        long ops = result.getMetadata().getAllOps();
        return List.of(new ScalarResult("cpu.time.norm", ops == 0 ? Double.NaN : cpu / (double) ops, "ns/op",
                AggregationPolicy.AVG));
    }

    /** CPU nanoseconds so far of each live JMH worker thread, by thread id. */
    private static Map<Long, Long> workerCpu() {
        Map<Long, Long> cpu = new HashMap<>();
        for (ThreadInfo t : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
            if (t != null && t.getThreadName().contains("-jmh-worker-")) {
                long ns = THREADS.getThreadCpuTime(t.getThreadId());
                if (ns >= 0) {
                    cpu.put(t.getThreadId(), ns);
                }
            }
        }
        return cpu;
    }
}
