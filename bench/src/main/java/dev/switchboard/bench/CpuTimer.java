package dev.switchboard.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.function.LongSupplier;

/**
 * CPU time per operation: the thread's own CPU time over batches of calls, after a warm-up,
 * median of the batches. Unlike wall time it does not count the time the thread waited for a
 * core, so on a machine shared with other work it says what the code costs; JMH's wall-clock
 * figures beside it say what a caller waited.
 */
public final class CpuTimer {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    /** Where results go, so that the JIT cannot drop the calls. */
    private static volatile long blackhole;

    private CpuTimer() {
    }

    /** Median CPU ns per call of {@code op} over {@code batches} batches of {@code calls} calls. */
    public static double nanosPerCall(LongSupplier op, int warmupCalls, int batches, int calls) {
        long sink = 0;
        for (int i = 0; i < warmupCalls; i++) {
            sink += op.getAsLong();
        }
        double[] perCall = new double[batches];
        for (int b = 0; b < batches; b++) {
            long start = THREADS.getCurrentThreadCpuTime();
            for (int i = 0; i < calls; i++) {
                sink += op.getAsLong();
            }
            perCall[b] = (THREADS.getCurrentThreadCpuTime() - start) / (double) calls;
        }
        blackhole = sink;
        Arrays.sort(perCall);
        return perCall[batches / 2];
    }
}
