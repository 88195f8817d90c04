package dev.switchboard.server.internal;

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
 * never waits for a database on an event loop. A change either way is logged once.
 */
public final class StoreHealth implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StoreHealth.class);

    private final ConversationStore store;
    private final ScheduledExecutorService probe;
    private volatile String problem;

    public StoreHealth(ConversationStore store, Duration every) {
        this.store = Objects.requireNonNull(store);
        this.probe = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "switchboard-store-health");
            t.setDaemon(true);
            return t;
        });
        probe.scheduleWithFixedDelay(this::check, 0, every.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void check() {
        String now;
        try {
            now = store.problem();
        } catch (RuntimeException e) {
            now = "the store's check failed: " + e;
        }
        String before = problem;
        problem = now;
        if (now != null && before == null) {
            log.warn("store unavailable: {}", now);
        } else if (now == null && before != null) {
            log.info("store available again");
        }
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
