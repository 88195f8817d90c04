package dev.switchboard.server.internal;

import dev.switchboard.core.spi.ClusterBus;
import dev.switchboard.core.spi.ConversationStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Whether the store serves, as {@code /healthz} reports it: asked of the store ({@link
 * ConversationStore#problem()}) every few seconds on a thread of its own, so that a health check
 * never waits for a database on an event loop. A change either way is logged once; a problem is
 * reported once two checks in a row found it.
 */
public final class StoreHealth implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StoreHealth.class);
    private static final Duration CLUSTER_TIMEOUT = Duration.ofSeconds(2);

    private final ConversationStore store;
    private final ClusterBus bus;
    private final ScheduledExecutorService probe;
    private volatile String problem;
    private volatile String clusterProblem;
    /** Store checks failed in a row. */
    private int storeFailures;
    /** Cluster checks failed in a row. */
    private int clusterFailures;

    /** Checks the store, and the cluster's bus when {@code bus} is not null, every {@code every}. */
    public StoreHealth(ConversationStore store, ClusterBus bus, Duration every) {
        this.store = Objects.requireNonNull(store);
        this.bus = bus;
        this.probe = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "switchboard-store-health");
            t.setDaemon(true);
            return t;
        });
        probe.scheduleWithFixedDelay(this::check, 0, every.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** One check of the store (and the bus); package-private so that a test can make them one by one. */
    void check() {
        String now;
        try {
            now = store.problem();
        } catch (RuntimeException e) {
            now = "the store's check failed: " + e;
        }
        String before = problem;
        // Two checks in a row, as for the cluster: one slow connection on a loaded machine is no outage.
        storeFailures = now == null ? 0 : storeFailures + 1;
        now = storeFailures >= 2 || now == null ? now : before;
        problem = now;
        if (now != null && before == null) {
            log.warn("store unavailable: {}", now);
        } else if (now == null && before != null) {
            log.info("store available again");
        }
        if (bus != null) {
            String was = clusterProblem;
            String is;
            try {
                is = bus.problem(CLUSTER_TIMEOUT).get(CLUSTER_TIMEOUT.toMillis() * 2, TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                is = "the cluster's check failed: " + e;
            }
            // Two checks in a row, so that one slow answer under load does not take the node out.
            clusterFailures = is == null ? 0 : clusterFailures + 1;
            is = clusterFailures >= 2 || is == null ? is : was;
            clusterProblem = is;
            if (is != null && was == null) {
                log.warn("cluster unavailable: {}", is);
            } else if (is == null && was != null) {
                log.info("cluster available again");
            }
        }
    }

    /** What kept the cluster's bus from answering at the last check, or null when it answered (or there is none). */
    public String clusterProblem() {
        return clusterProblem;
    }

    /** What kept the store from serving at the last check, or null when it served. */
    public String problem() {
        return problem;
    }

    @Override
    public void close() {
        probe.shutdownNow();
    }
}
