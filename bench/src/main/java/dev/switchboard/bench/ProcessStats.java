package dev.switchboard.bench;

/** A process's CPU time (user + system) over a phase and its largest resident set seen in it. */
public record ProcessStats(double cpuSeconds, long peakRssBytes) {
}
