package dev.switchboard.core.spi;

import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.SerializedString;

import java.util.Objects;

/**
 * Text a dialect writes into frame after frame, encoded once. A field name or a constant value as
 * a {@link SerializedString} ({@link #of}) is copied into the frame as quoted UTF-8 bytes, where a
 * {@code String} is escaped character by character every time; {@link Repeated} does the same for
 * a value that stays the same over many frames, such as a message's id over its deltas. With
 * both, a text delta's frame costs little more than escaping the delta itself.
 */
public final class JsonText {
    private JsonText() {
    }

    /** A constant, encoded once (keep it in a {@code static final} field). */
    public static SerializedString of(String text) {
        return new SerializedString(text);
    }

    /**
     * The encoding of the last value asked for, kept until a different one is: one per session and
     * field, used from the session's thread only.
     */
    public static final class Repeated {
        private String text;
        private SerializedString encoded;

        /** {@code value} encoded: the kept encoding when it is the value asked for last. */
        public SerializableString of(String value) {
            Objects.requireNonNull(value, "value");
            if (value != text) {
                if (!value.equals(text)) {
                    encoded = new SerializedString(value);
                }
                text = value;
            }
            return encoded;
        }
    }
}
