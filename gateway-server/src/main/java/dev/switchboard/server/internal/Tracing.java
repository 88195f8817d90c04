package dev.switchboard.server.internal;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;

import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The OpenTelemetry SDK the gateway exports its spans with, over OTLP/HTTP (protobuf), in batches
 * off the threads that end the spans. Built only when an endpoint is set: otherwise every span is a
 * no-op and nothing of the SDK runs.
 */
public final class Tracing {
    private Tracing() {
    }

    /**
     * The SDK exporting to {@code endpoint} (a base URL: spans go to its {@code /v1/traces}), as
     * service {@code OTEL_SERVICE_NAME} (default {@code switchboard}) at {@code version}.
     */
    public static OpenTelemetrySdk otlp(String endpoint, String version) {
        String base = endpoint.strip().replaceAll("/+$", "");
        String service = Objects.requireNonNullElse(System.getenv("OTEL_SERVICE_NAME"), "switchboard");
        Resource resource = Resource.getDefault().merge(Resource.create(Attributes.of(
                AttributeKey.stringKey("service.name"), service.isBlank() ? "switchboard" : service,
                AttributeKey.stringKey("service.version"), version)));
        OtlpHttpSpanExporter exporter = OtlpHttpSpanExporter.builder().setEndpoint(base + "/v1/traces").build();
        SdkTracerProvider tracers = SdkTracerProvider.builder().setResource(resource)
                .addSpanProcessor(BatchSpanProcessor.builder(exporter).build()).build();
        return OpenTelemetrySdk.builder().setTracerProvider(tracers)
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
    }

    /** Exports what is left and stops, waiting up to five seconds. */
    public static void close(OpenTelemetry otel) {
        if (otel instanceof OpenTelemetrySdk sdk) {
            sdk.shutdown().join(5, TimeUnit.SECONDS);
        }
    }
}
