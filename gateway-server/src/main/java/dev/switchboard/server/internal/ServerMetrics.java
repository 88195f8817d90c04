package dev.switchboard.server.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The server's meters: connections by dialect and transport, what they were sent, why they
 * closed, and what was refused (docs/observability.md). Tag values are dialect ids, transports,
 * close codes and fixed reasons, never anything a client sent, so the series stay bounded.
 */
public final class ServerMetrics {
    /** A refused request's reasons, as tagged. */
    public static final String AUTH = "auth";
    public static final String CONNECTION_LIMIT = "connection_limit";
    public static final String INVALID_INPUT = "invalid_input";
    public static final String UNAVAILABLE = "unavailable";

    private final MeterRegistry registry;
    private final Map<String, AtomicInteger> open = new ConcurrentHashMap<>();
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, Delivery> deliveries = new ConcurrentHashMap<>();

    public ServerMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    public MeterRegistry registry() {
        return registry;
    }

    /** What one dialect's connections were sent: events, and bytes on the wire. */
    public record Delivery(Counter events, Counter bytes, Counter overflows) {
    }

    /** Counts nothing: a connection's until its dialect is known. */
    static final Delivery NONE = new Delivery(null, null, null);

    Delivery delivery(String dialect) {
        return deliveries.computeIfAbsent(dialect, d -> new Delivery(
                Counter.builder("switchboard.events.delivered").description("events written to clients, by dialect")
                        .tag("dialect", d).register(registry),
                Counter.builder("switchboard.sent").description("bytes of events written to clients, by dialect")
                        .baseUnit("bytes").tag("dialect", d).register(registry),
                Counter.builder("switchboard.outbox.overflows")
                        .description("connections cut off for reading too slowly, by dialect").tag("dialect", d)
                        .register(registry)));
    }

    /** A connection of {@code dialect} over {@code transport} ({@code websocket}, {@code sse}, {@code http}) opened. */
    void opened(String dialect, String transport) {
        counter("switchboard.connections.accepted", "connections accepted, by dialect and transport",
                "dialect", dialect, "transport", transport).increment();
        open.computeIfAbsent(dialect + '\n' + transport, k -> {
            AtomicInteger n = new AtomicInteger();
            Gauge.builder("switchboard.connections.open", n, AtomicInteger::get)
                    .description("connections open, by dialect and transport")
                    .tag("dialect", dialect).tag("transport", transport).register(registry);
            return n;
        }).incrementAndGet();
    }

    /**
     * A connection {@link #opened} closed: {@code reason} is {@code client} (the client closed or
     * dropped it), {@code end} (an HTTP exchange answered) or the WebSocket close code the gateway sent.
     */
    void closed(String dialect, String transport, String reason) {
        open.get(dialect + '\n' + transport).decrementAndGet();
        counter("switchboard.connections.closed", "connections closed, by dialect, transport and reason",
                "dialect", dialect, "transport", transport, "reason", reason).increment();
    }

    /** A request refused before it reached a dialect: {@link #AUTH}, {@link #CONNECTION_LIMIT}, ... */
    void refused(String reason) {
        counter("switchboard.requests.refused", "requests and commands refused, by reason", "reason", reason)
                .increment();
    }

    private Counter counter(String name, String description, String... tags) {
        return counters.computeIfAbsent(name + '\n' + String.join("\n", tags),
                k -> Counter.builder(name).description(description).tags(tags).register(registry));
    }
}
