package dev.switchboard.core;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;
import java.util.Optional;

/** How much harm a tool call can do, lowest first; wire names are lower case. */
public enum RiskLevel {
    LOW, MEDIUM, HIGH, CRITICAL;

    private final String wire = name().toLowerCase(Locale.ROOT);

    @JsonValue
    public String wireName() {
        return wire;
    }

    /** The level with this wire name, if any. */
    public static Optional<RiskLevel> fromWire(String name) {
        for (RiskLevel r : values()) {
            if (r.wire.equals(name)) {
                return Optional.of(r);
            }
        }
        return Optional.empty();
    }

    @JsonCreator
    static RiskLevel parse(String name) {
        return fromWire(name).orElseThrow(() -> new IllegalArgumentException("unknown risk level " + name));
    }
}
