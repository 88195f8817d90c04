package dev.switchboard.core.internal;

import dev.switchboard.core.ErrorCode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The hub's meters (docs/observability.md lists them). Every tag value comes from a closed set (an
 * outcome, an error code, a dialect's id), never from what a client sends, so the number of
 * series stays bounded. Meters are looked up once and kept: recording is an add to a striped
 * counter, off the per-event path except where noted.
 */
public final class HubMetrics {
    /**
     * The buckets of the hub's time histograms, a few per decade from 1 ms to an hour: enough for
     * quantiles, few enough that a scrape stays small (Micrometer's own would add some 70 a series).
     */
    public static final Duration[] SECONDS = buckets(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
            5, 10, 30, 60, 120, 300, 900, 3600);
    /** The buckets of the time to an approval's decision: a person answers in seconds to a day. */
    private static final Duration[] DECISION_SECONDS = buckets(1, 5, 15, 30, 60, 120, 300, 900, 1800, 3600, 14400,
            86400);
    /** The error code label of a run that finished. */
    private static final String NO_ERROR = "none";
    /** The buckets of counts of events and rows. */
    private static final double[] COUNTS = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 100000};

    /** The runs started on this node: new ones and continuations after a decision. */
    private final Counter runsStarted;
    /** By error code, registered at the first failure with it: a scrape lists only codes that happened. */
    private final Map<ErrorCode, Counter> runsFailed = new ConcurrentHashMap<>();
    private final Counter runsFinished;
    private final Map<ErrorCode, Timer> failedDuration = new ConcurrentHashMap<>();
    private final Timer finishedDuration;
    private final Timer firstEvent;
    private final Map<String, Counter> resumes = new ConcurrentHashMap<>();
    private final DistributionSummary replayed;
    private final Map<String, Timer> decisions = new ConcurrentHashMap<>();
    private final Timer storeWrite;
    private final DistributionSummary storeBatch;
    private final Counter rateLimited;
    private final MeterRegistry registry;

    public HubMetrics(MeterRegistry registry) {
        this.registry = registry;
        runsStarted = Counter.builder("switchboard.runs.started").description("runs started on this node")
                .register(registry);
        runsFinished = ended("finished", NO_ERROR);
        finishedDuration = duration("finished", NO_ERROR);
        firstEvent = Timer.builder("switchboard.run.first_event")
                .description("from a run's start to the first event its runtime emits to clients")
                .serviceLevelObjectives(SECONDS).register(registry);
        replayed = DistributionSummary.builder("switchboard.resume.replayed")
                .description("events sent to a client resuming from a cursor, before it is live")
                .baseUnit("events").serviceLevelObjectives(COUNTS).register(registry);
        storeWrite = Timer.builder("switchboard.store.write")
                .description("time to store one batch of events, messages and approvals")
                .serviceLevelObjectives(SECONDS).register(registry);
        storeBatch = DistributionSummary.builder("switchboard.store.batch.size")
                .description("rows in one stored batch").baseUnit("rows").serviceLevelObjectives(COUNTS)
                .register(registry);
        rateLimited = refused("rate_limit");
    }

    private static Duration[] buckets(double... seconds) {
        Duration[] out = new Duration[seconds.length];
        for (int i = 0; i < seconds.length; i++) {
            out[i] = Duration.ofNanos((long) (seconds[i] * 1e9));
        }
        return out;
    }

    /** A meter registry that keeps nothing: the hub's default when none is given. */
    public static MeterRegistry none() {
        return new io.micrometer.core.instrument.composite.CompositeMeterRegistry();
    }

    private Counter ended(String outcome, String errorCode) {
        return Counter.builder("switchboard.runs.ended").description("runs ended, by outcome and error code")
                .tag("outcome", outcome).tag("error_code", errorCode).register(registry);
    }

    private Timer duration(String outcome, String errorCode) {
        return Timer.builder("switchboard.run.duration").description("a run's time from its start to its end")
                .tag("outcome", outcome).tag("error_code", errorCode)
                .serviceLevelObjectives(SECONDS).register(registry);
    }

    /** The counter of requests refused for {@code reason}, shared with the server's refusals. */
    private Counter refused(String reason) {
        return Counter.builder("switchboard.requests.refused")
                .description("requests and commands refused, by reason").tag("reason", reason).register(registry);
    }

    /** Read when scraped: the runs going on on this node. */
    void activeRuns(Supplier<Number> activeRuns) {
        Gauge.builder("switchboard.runs.active", activeRuns).description("runs going on on this node")
                .register(registry);
    }

    /** Read when scraped: the approvals of this node's runs waiting for a decision. */
    void pendingApprovals(Supplier<Number> pending) {
        Gauge.builder("switchboard.approvals.pending", pending)
                .description("approvals of this node's runs waiting for a decision").register(registry);
    }

    void runStarted() {
        runsStarted.increment();
    }

    /** A run ended: {@code failure} null when it finished. */
    void runEnded(ErrorCode failure, long startedNanos) {
        long took = System.nanoTime() - startedNanos;
        if (failure == null) {
            runsFinished.increment();
            finishedDuration.record(took, TimeUnit.NANOSECONDS);
        } else {
            runsFailed.computeIfAbsent(failure, code -> ended("failed", code.wireCode())).increment();
            failedDuration.computeIfAbsent(failure, code -> duration("failed", code.wireCode()))
                    .record(took, TimeUnit.NANOSECONDS);
        }
    }

    void firstEvent(long startedNanos) {
        firstEvent.record(System.nanoTime() - startedNanos, TimeUnit.NANOSECONDS);
    }

    void rateLimited() {
        rateLimited.increment();
    }

    /**
     * A resume from a cursor: {@code outcome} is {@code memory} (every event from the node's tail),
     * {@code store} (older ones read from the store or the cluster) or {@code resync} (the cursor
     * named no event); {@code events} were sent before the client was live.
     */
    void resumed(String outcome, int events) {
        resumes.computeIfAbsent(outcome, o -> Counter.builder("switchboard.resumes")
                .description("resumes from a cursor, by outcome").tag("outcome", o).register(registry)).increment();
        replayed.record(events);
    }

    /** A person decided an approval through {@code via} (a dialect's id, {@code operator} or {@code cluster}). */
    void decided(boolean approved, String via, long requestedNanos) {
        String outcome = approved ? "approved" : "rejected";
        decisions.computeIfAbsent(outcome + '\n' + via, k -> Timer.builder("switchboard.approval.decision")
                        .description("from an approval's request to its decision, by outcome and where it was decided")
                        .tag("outcome", outcome).tag("via", via).serviceLevelObjectives(DECISION_SECONDS)
                        .register(registry))
                .record(System.nanoTime() - requestedNanos, TimeUnit.NANOSECONDS);
    }

    void stored(int rows, long tookNanos) {
        storeWrite.record(tookNanos, TimeUnit.NANOSECONDS);
        storeBatch.record(rows);
    }
}
