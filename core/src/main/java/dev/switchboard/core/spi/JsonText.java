package dev.switchboard.core.spi;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.SerializedString;
import dev.switchboard.core.Json;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * Text a dialect writes into frame after frame, encoded once. A field name or a constant value
 * ({@link #of}) is copied into the frame as its escaped UTF-8 bytes, where a {@code String} is
 * escaped character by character every time; {@link Repeated} does the same for a value that
 * stays the same over many frames, such as a message's id over its deltas. With both, a text
 * delta's frame costs little more than escaping the delta itself.
 *
 * <p>The bytes are the ones the gateway's generator writes for the same {@code String} (Jackson's
 * own {@link SerializedString} writes a character outside the Basic Multilingual Plane as four
 * UTF-8 bytes, where the generator escapes its surrogate pair), so a frame is the same whichever
 * way its text was written.
 */
public final class JsonText {
    private JsonText() {
    }

    /** A constant, encoded once (keep it in a {@code static final} field). */
    public static SerializableString of(String text) {
        return new Encoded(text);
    }

    /**
     * The encoding of the last value asked for, kept until a different one is: one per session and
     * field, used from the session's thread only.
     */
    public static final class Repeated {
        private String text;
        private SerializableString encoded;

        /** {@code value} encoded: the kept encoding when it is the value asked for last. */
        public SerializableString of(String value) {
            Objects.requireNonNull(value, "value");
            if (value != text) {
                if (!value.equals(text)) {
                    encoded = new Encoded(value);
                }
                text = value;
            }
            return encoded;
        }
    }

    /** A string with its escaped UTF-8 bytes as the generator writes them; the rest as Jackson's own. */
    private static final class Encoded implements SerializableString {
        private final SerializedString chars;
        private final byte[] quotedUtf8;

        Encoded(String value) {
            this.chars = new SerializedString(value);
            this.quotedUtf8 = generated(value);
        }

        /** The bytes between the quotes the generator writes for {@code value}. */
        private static byte[] generated(String value) {
            ByteArrayOutputStream out = new ByteArrayOutputStream(value.length() + 8);
            try (JsonGenerator g = Json.FACTORY.createGenerator(out)) {
                g.writeString(value);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            byte[] quoted = out.toByteArray();
            return Arrays.copyOfRange(quoted, 1, quoted.length - 1);
        }

        @Override
        public String getValue() {
            return chars.getValue();
        }

        @Override
        public int charLength() {
            return chars.charLength();
        }

        @Override
        public char[] asQuotedChars() {
            return chars.asQuotedChars();
        }

        @Override
        public byte[] asUnquotedUTF8() {
            return chars.asUnquotedUTF8();
        }

        @Override
        public byte[] asQuotedUTF8() {
            return quotedUtf8.clone();
        }

        @Override
        public int appendQuotedUTF8(byte[] buffer, int offset) {
            if (offset + quotedUtf8.length > buffer.length) {
                return -1;
            }
            System.arraycopy(quotedUtf8, 0, buffer, offset, quotedUtf8.length);
            return quotedUtf8.length;
        }

        @Override
        public int appendQuoted(char[] buffer, int offset) {
            return chars.appendQuoted(buffer, offset);
        }

        @Override
        public int appendUnquotedUTF8(byte[] buffer, int offset) {
            return chars.appendUnquotedUTF8(buffer, offset);
        }

        @Override
        public int appendUnquoted(char[] buffer, int offset) {
            return chars.appendUnquoted(buffer, offset);
        }

        @Override
        public int writeQuotedUTF8(OutputStream out) throws IOException {
            out.write(quotedUtf8);
            return quotedUtf8.length;
        }

        @Override
        public int writeUnquotedUTF8(OutputStream out) throws IOException {
            return chars.writeUnquotedUTF8(out);
        }

        @Override
        public int putQuotedUTF8(ByteBuffer buffer) {
            if (quotedUtf8.length > buffer.remaining()) {
                return -1;
            }
            buffer.put(quotedUtf8);
            return quotedUtf8.length;
        }

        @Override
        public int putUnquotedUTF8(ByteBuffer buffer) {
            return chars.putUnquotedUTF8(buffer);
        }

        @Override
        public String toString() {
            return chars.getValue();
        }
    }
}
