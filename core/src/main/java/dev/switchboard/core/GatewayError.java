package dev.switchboard.core;

import java.util.Map;
import java.util.Objects;

/**
 * An error answered to one connection or request (not part of any run's event log):
 * a bad frame, a refused command. {@code details} are extra string facts, such as the field at fault.
 */
public record GatewayError(ErrorCode code, String message, Map<String, String> details) {
    public GatewayError {
        Objects.requireNonNull(code, "code");
        message = message == null ? code.defaultMessage() : message;
        details = details == null ? Map.of() : Map.copyOf(details);
    }

    public static GatewayError of(ErrorCode code, String message) {
        return new GatewayError(code, message, Map.of());
    }

    /** A MISSING_FIELD or INVALID_FIELD error naming the field. */
    public static GatewayError field(ErrorCode code, String field, String message) {
        return new GatewayError(code, message, Map.of("field", field));
    }
}
