package dev.switchboard.core;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;
import java.util.Optional;

/** Who a message is from. Wire names are lower case in every dialect. */
public enum Role {
    USER, ASSISTANT, SYSTEM, DEVELOPER, TOOL;

    private final String wire = name().toLowerCase(Locale.ROOT);

    @JsonValue
    public String wireName() {
        return wire;
    }

    /** The role with this wire name, if any. */
    public static Optional<Role> fromWire(String name) {
        for (Role r : values()) {
            if (r.wire.equals(name)) {
                return Optional.of(r);
            }
        }
        return Optional.empty();
    }

    @JsonCreator
    static Role parse(String name) {
        return fromWire(name).orElseThrow(() -> new IllegalArgumentException("unknown role " + name));
    }
}
