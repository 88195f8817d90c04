package dev.switchboard.bench;

import org.HdrHistogram.Histogram;

/**
 * What one load measurement delivered: frames (events) received while runs were active, over the
 * time from the first request to the last run's end, and the latency of every frame in
 * microseconds, from its emission time when the dialect carries one, else from its run's request;
 * for a paced measurement, also where in time its slow frames fell ({@code timeline}, else null).
 */
public record LoadResult(String server, LoadPlan plan, long frames, long runs, long retries, long errors,
                         long elapsedNanos, boolean timedOut, Histogram latencyMicros, boolean latencyFromRequest,
                         ProcessStats serverStats, ProcessStats clientStats, double otherCpuSeconds,
                         long clientGcs, long clientGcMillis, Timeline timeline) {

    /** This result with the CPU and memory the processes used while it was taken. */
    public LoadResult with(ProcessStats server, ProcessStats client, double otherCpu) {
        return new LoadResult(this.server, plan, frames, runs, retries, errors, elapsedNanos, timedOut, latencyMicros,
                latencyFromRequest, server, client, otherCpu, clientGcs, clientGcMillis, timeline);
    }

    /**
     * This result with the collections of the load generator's own JVM while it was taken, and
     * their time: its pauses delay the frames of whichever server it measures.
     */
    public LoadResult withClientGc(long collections, long millis) {
        return new LoadResult(server, plan, frames, runs, retries, errors, elapsedNanos, timedOut, latencyMicros,
                latencyFromRequest, serverStats, clientStats, otherCpuSeconds, collections, millis, timeline);
    }

    public double eventsPerSecond() {
        return elapsedNanos == 0 ? 0 : frames * 1e9 / elapsedNanos;
    }

    public double seconds() {
        return elapsedNanos / 1e9;
    }

    /** A latency percentile in milliseconds. */
    public double latencyMillis(double percentile) {
        return latencyMicros.getTotalCount() == 0 ? Double.NaN
                : latencyMicros.getValueAtPercentile(percentile) / 1000.0;
    }

    public String summary() {
        return String.format("%-8s %-15s clients=%5d runs=%6d frames=%9d in %6.2fs: %,10.0f ev/s  p50=%.1fms "
                        + "p99=%.1fms p99.9=%.1fms%s retries=%d errors=%d%s  server cpu=%.1fs rss=%dMiB jit=%.1fs"
                + " client gc=%d/%dms",
                server, plan.dialect().id, plan.clients(), runs, frames, seconds(), eventsPerSecond(),
                latencyMillis(50), latencyMillis(99), latencyMillis(99.9), latencyFromRequest ? " (from request)" : "",
                retries, errors, timedOut ? " TIMED OUT" : "",
                serverStats == null ? 0 : serverStats.cpuSeconds(),
                serverStats == null ? 0 : serverStats.peakRssBytes() >> 20,
                serverStats == null ? 0 : serverStats.jitSeconds(), clientGcs, clientGcMillis);
    }
}
