package dev.switchboard.core.spi;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Tracer;

import java.util.Objects;

/**
 * Where a module reports what it does: {@code meters} for metrics (Micrometer; the gateway serves
 * them at {@code /metrics}), {@code openTelemetry} for traces (a no-op unless the gateway exports
 * them), and whether prompts and completions may go into spans ({@code captureContent}, off unless
 * the operator sets {@code --otel-capture-content}). docs/observability.md lists what the built-in
 * modules record.
 */
public record Telemetry(MeterRegistry meters, OpenTelemetry openTelemetry, boolean captureContent) {
    /** The instrumentation scope of the gateway's spans. */
    public static final String SCOPE = "dev.switchboard";

    public Telemetry {
        Objects.requireNonNull(meters, "meters");
        Objects.requireNonNull(openTelemetry, "openTelemetry");
    }

    /** Records nothing: for a module used on its own, in tests or embedded. */
    public static Telemetry none() {
        return new Telemetry(new CompositeMeterRegistry(), OpenTelemetry.noop(), false);
    }

    public Tracer tracer() {
        return openTelemetry.getTracer(SCOPE);
    }
}
