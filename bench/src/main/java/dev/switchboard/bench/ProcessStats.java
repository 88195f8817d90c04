package dev.switchboard.bench;

/**
 * A process's CPU time (user + system) over a phase and its largest resident set seen in it;
 * {@code jitSeconds} is the part of the CPU time its JIT compiler threads took (0 for a process
 * that is not a JVM); {@code runQueueWaitSeconds} is the time its threads were ready to run and
 * waited for a core, summed over its threads (NaN where it was not read).
 */
public record ProcessStats(double cpuSeconds, long peakRssBytes, double jitSeconds, double runQueueWaitSeconds) {
    public ProcessStats(double cpuSeconds, long peakRssBytes, double jitSeconds) {
        this(cpuSeconds, peakRssBytes, jitSeconds, Double.NaN);
    }
}
