package dev.switchboard.core.internal;

import dev.switchboard.core.ErrorCode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.EnumMap;
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
    /** The runs started on this node: new ones and continuations after a decision. */
    private final Counter runsStarted;
    private final Map<ErrorCode, Counter> runsFailed = new EnumMap<>(ErrorCode.class);
    private final Counter runsFinished;
    private final Map<ErrorCode, Timer> failedDuration = new EnumMap<>(ErrorCode.class);
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
        runsFinished = ended("finished", ErrorCode.INTERNAL, false);
        finishedDuration = duration("finished", null);
        for (ErrorCode code : ErrorCode.values()) {
            runsFailed.put(code, ended("failed", code, true));
            failedDuration.put(code, duration("failed", code));
        }
        firstEvent = Timer.builder("switchboard.run.first_event")
                .description("from a run's start to the first event its runtime emits to clients")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofSeconds(60)).register(registry);
        replayed = DistributionSummary.builder("switchboard.resume.replayed")
                .description("events sent to a client resuming from a cursor, before it is live")
                .baseUnit("events").publishPercentileHistogram().minimumExpectedValue(1.0)
                .maximumExpectedValue(100_000.0).register(registry);
        storeWrite = Timer.builder("switchboard.store.write")
                .description("time to store one batch of events, messages and approvals")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofSeconds(30)).register(registry);
        storeBatch = DistributionSummary.builder("switchboard.store.batch.size")
                .description("rows in one stored batch").baseUnit("rows").publishPercentileHistogram()
                .minimumExpectedValue(1.0).maximumExpectedValue(100_000.0).register(registry);
        rateLimited = refused("rate_limit");
    }

    /** A meter registry that keeps nothing: the hub's default when none is given. */
    public static MeterRegistry none() {
        return new io.micrometer.core.instrument.composite.CompositeMeterRegistry();
    }

    private Counter ended(String outcome, ErrorCode code, boolean failed) {
        return Counter.builder("switchboard.runs.ended").description("runs ended, by outcome and error code")
                .tag("outcome", outcome).tag("error_code", failed ? code.wireCode() : "none").register(registry);
    }

    private Timer duration(String outcome, ErrorCode code) {
        return Timer.builder("switchboard.run.duration").description("a run's time from its start to its end")
                .tag("outcome", outcome).tag("error_code", code == null ? "none" : code.wireCode())
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofHours(1)).register(registry);
    }

    /** The counter of requests refused for {@code reason}, shared with the server's refusals. */
    public Counter refused(String reason) {
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
            runsFailed.get(failure).increment();
            failedDuration.get(failure).record(took, TimeUnit.NANOSECONDS);
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
                        .tag("outcome", outcome).tag("via", via).publishPercentileHistogram()
                        .minimumExpectedValue(Duration.ofMillis(10)).maximumExpectedValue(Duration.ofDays(1))
                        .register(registry))
                .record(System.nanoTime() - requestedNanos, TimeUnit.NANOSECONDS);
    }

    void stored(int rows, long tookNanos) {
        storeWrite.record(tookNanos, TimeUnit.NANOSECONDS);
        storeBatch.record(rows);
    }
}
