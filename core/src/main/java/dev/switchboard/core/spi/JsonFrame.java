package dev.switchboard.core.spi;

import com.fasterxml.jackson.core.SerializableString;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A frame's JSON built as bytes, for the few frames a stream sends over and over (a text delta's).
 * The parts every such frame repeats, its field names, constant values and punctuation, are encoded
 * once ({@link #fragment}) and copied in; strings are escaped straight into the frame; numbers are
 * written as their digits. No generator, no context to track and nothing allocated per frame, so a
 * text delta costs little more than escaping its text.
 *
 * <p>The bytes are the ones the gateway's generator ({@link dev.switchboard.core.Json#FACTORY})
 * writes for the same values: {@code "} and {@code \} and the controls {@code \b \t \n \f \r}
 * escaped as such, other controls as {@code \}{@code u00XX} in upper-case hex, every surrogate (a
 * character outside the Basic Multilingual Plane is two) as its own {@code \}{@code uXXXX}, the
 * rest as UTF-8. So a frame is the same whichever way it was written; {@code JsonFrameTest} holds
 * the two to every {@code char}.
 *
 * <p>Use: {@link #open()} on the thread that writes the frame, the frame's parts in order, then
 * {@link #writeTo}. The builder is the thread's and is reused frame after frame; it is not to be
 * kept past {@link #writeTo}.
 */
public final class JsonFrame {
    private static final ThreadLocal<JsonFrame> THREAD_FRAME = ThreadLocal.withInitial(JsonFrame::new);
    private static final int INITIAL_CAPACITY = 512;
    /** A builder grown past this for one long frame goes back to its initial size afterwards. */
    private static final int KEPT_CAPACITY = 64 * 1024;
    private static final byte[] HEX = "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TRUE = {'t', 'r', 'u', 'e'};
    private static final byte[] FALSE = {'f', 'a', 'l', 's', 'e'};
    private static final byte[] NULL = {'n', 'u', 'l', 'l'};
    private static final int[] INT_POWERS_OF_TEN = {1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000,
            100_000_000, 1_000_000_000};
    /** The tens and the ones digit of every number below 100. */
    private static final byte[] DIGIT_TENS = new byte[100];
    private static final byte[] DIGIT_ONES = new byte[100];
    private static final byte[] LONG_MIN = Long.toString(Long.MIN_VALUE).getBytes(StandardCharsets.US_ASCII);
    /**
     * For each ASCII character: 0 written as itself, a letter written after a backslash, or -1
     * written as {@code \}{@code u00XX}.
     */
    private static final byte[] ESCAPES = new byte[128];

    static {
        for (int i = 0; i < 100; i++) {
            DIGIT_TENS[i] = (byte) ('0' + i / 10);
            DIGIT_ONES[i] = (byte) ('0' + i % 10);
        }
        for (int c = 0; c < 0x20; c++) {
            ESCAPES[c] = -1;
        }
        ESCAPES['"'] = '"';
        ESCAPES['\\'] = '\\';
        ESCAPES['\b'] = 'b';
        ESCAPES['\t'] = 't';
        ESCAPES['\f'] = 'f';
        ESCAPES['\n'] = 'n';
        ESCAPES['\r'] = 'r';
    }

    private byte[] buf = new byte[INITIAL_CAPACITY];
    private char[] chars = new char[INITIAL_CAPACITY];
    /** The digits of the last number above the int range written below 10^16, kept for the next. */
    private long lastLong = -1;
    private final byte[] lastLongDigits = new byte[16];
    private int lastLongLength;
    private int length;
    private boolean open;

    private JsonFrame() {
    }

    /**
     * The JSON text {@code json} as bytes to copy into frames with {@link #raw}: a constant part of a
     * frame, such as {@code {"type":"TEXT_MESSAGE_CONTENT","messageId":}. Keep it in a
     * {@code static final} field.
     */
    public static byte[] fragment(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }

    /** The calling thread's builder, emptied. */
    public static JsonFrame open() {
        JsonFrame frame = THREAD_FRAME.get();
        if (frame.open) {
            // A frame begun inside another one's writing on this thread: it gets a builder of its own.
            frame = new JsonFrame();
        }
        frame.open = true;
        frame.length = 0;
        return frame;
    }

    /**
     * A part of a frame that repeats over many frames and holds one string value: {@code before},
     * the value quoted and escaped, {@code after}, as one array for {@link #raw}, encoded again only
     * when the value asked for is not the last one: such as what every delta of one message writes
     * before its text (the event's type, the message's id, the delta's name). One per session and
     * part, used from its thread only.
     */
    public static final class RepeatedPart {
        private final byte[] before;
        private final byte[] after;
        private String value;
        private byte[] bytes;

        /** {@code before} and {@code after} are {@link #fragment}s. */
        public RepeatedPart(byte[] before, byte[] after) {
            this.before = before;
            this.after = after;
        }

        /** The part for {@code value}: the kept one when {@code value} is the one asked for last. */
        public byte[] of(String value) {
            if (!value.equals(this.value)) {
                bytes = open().raw(before).string(value).raw(after).toByteArray();
                this.value = value;
            }
            return bytes;
        }
    }

    /** Copies bytes of JSON text (a {@link #fragment}) into the frame as they are. */
    public JsonFrame raw(byte[] json) {
        ensure(json.length);
        System.arraycopy(json, 0, buf, length, json.length);
        length += json.length;
        return this;
    }

    /** A string value, quoted and escaped, encoded once before (see {@link JsonText}). */
    public JsonFrame string(SerializableString value) {
        ensure(2);
        buf[length++] = '"';
        int n = value.appendQuotedUTF8(buf, length);
        if (n < 0) {
            byte[] bytes = value.asQuotedUTF8();
            ensure(bytes.length + 1);
            System.arraycopy(bytes, 0, buf, length, bytes.length);
            n = bytes.length;
        }
        length += n;
        ensure(1);
        buf[length++] = '"';
        return this;
    }

    /** A string value, quoted and escaped as the generator escapes it. */
    public JsonFrame string(String value) {
        int chars = value.length();
        // At most six bytes a char (an escape), plus the quotes.
        ensure(chars * 6 + 2);
        if (chars > this.chars.length) {
            this.chars = new char[Math.max(chars, this.chars.length * 2)];
        }
        // The chars copied out first: a loop over an array is cheaper than charAt's checks a char.
        char[] in = this.chars;
        value.getChars(0, chars, in, 0);
        byte[] b = buf;
        int p = length;
        b[p++] = '"';
        for (int i = 0; i < chars; i++) {
            char c = in[i];
            if (c < 0x80) {
                byte escape = ESCAPES[c];
                if (escape == 0) {
                    b[p++] = (byte) c;
                } else if (escape > 0) {
                    b[p++] = '\\';
                    b[p++] = escape;
                } else {
                    p = unicodeEscape(b, p, c);
                }
            } else if (c < 0x800) {
                b[p++] = (byte) (0xC0 | (c >> 6));
                b[p++] = (byte) (0x80 | (c & 0x3F));
            } else if (Character.isSurrogate(c)) {
                p = unicodeEscape(b, p, c);
            } else {
                b[p++] = (byte) (0xE0 | (c >> 12));
                b[p++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                b[p++] = (byte) (0x80 | (c & 0x3F));
            }
        }
        b[p++] = '"';
        length = p;
        return this;
    }

    /** A whole number. */
    public JsonFrame number(long value) {
        if (value == Long.MIN_VALUE) {
            return raw(LONG_MIN);
        }
        ensure(20);
        long v = value;
        if (v < 0) {
            buf[length++] = '-';
            v = -v;
        }
        if (v <= Integer.MAX_VALUE) {
            length = digits((int) v, buf, length, 0);
        } else if (v == lastLong) {
            // The same millisecond timestamp as the thread's last frame, as most of a burst's frames are.
            System.arraycopy(lastLongDigits, 0, buf, length, lastLongLength);
            length += lastLongLength;
        } else if (v < 100_000_000L * 100_000_000L) {
            // A millisecond timestamp: one long division, then int arithmetic, which is much cheaper.
            long high = v / 100_000_000L;
            int start = length;
            length = digits((int) (v - high * 100_000_000L), buf, digits((int) high, buf, length, 0), 8);
            lastLong = v;
            lastLongLength = length - start;
            System.arraycopy(buf, start, lastLongDigits, 0, lastLongLength);
        } else {
            long high = v / 10_000_000_000_000_000L;
            long rest = v - high * 10_000_000_000_000_000L;
            long middle = rest / 100_000_000L;
            int p = digits((int) high, buf, length, 0);
            p = digits((int) middle, buf, p, 8);
            length = digits((int) (rest - middle * 100_000_000L), buf, p, 8);
        }
        return this;
    }

    /**
     * Writes {@code v} (at least 0) at {@code p} as its digits, padded with zeros to {@code width}
     * digits, and returns the position after them.
     */
    private static int digits(int v, byte[] b, int p, int width) {
        int count = 1;
        while (count < INT_POWERS_OF_TEN.length && v >= INT_POWERS_OF_TEN[count]) {
            count++;
        }
        int end = p + Math.max(count, width);
        int q = end;
        while (v >= 100) {
            int pair = v % 100;
            v /= 100;
            b[--q] = DIGIT_ONES[pair];
            b[--q] = DIGIT_TENS[pair];
        }
        b[--q] = DIGIT_ONES[v];
        if (v >= 10) {
            b[--q] = DIGIT_TENS[v];
        }
        while (q > p) {
            b[--q] = '0';
        }
        return end;
    }

    public JsonFrame bool(boolean value) {
        return raw(value ? TRUE : FALSE);
    }

    public JsonFrame nullValue() {
        return raw(NULL);
    }

    /** Hands the finished frame to {@code out} as one frame, and gives the builder back to the thread. */
    public void writeTo(FrameWriter out) throws IOException {
        try {
            out.frame(buf, 0, length);
        } finally {
            release();
        }
    }

    private void release() {
        open = false;
        if (buf.length > KEPT_CAPACITY) {
            buf = new byte[INITIAL_CAPACITY];
        }
        if (chars.length > KEPT_CAPACITY) {
            chars = new char[INITIAL_CAPACITY];
        }
    }

    /** Finishes the frame as a copy of its bytes, for a caller that keeps it, and gives the builder back. */
    public byte[] toByteArray() {
        byte[] bytes = Arrays.copyOf(buf, length);
        release();
        return bytes;
    }

    private static int unicodeEscape(byte[] b, int p, char c) {
        b[p++] = '\\';
        b[p++] = 'u';
        b[p++] = HEX[(c >> 12) & 0xF];
        b[p++] = HEX[(c >> 8) & 0xF];
        b[p++] = HEX[(c >> 4) & 0xF];
        b[p++] = HEX[c & 0xF];
        return p;
    }

    private void ensure(int more) {
        int needed = length + more;
        if (needed > buf.length) {
            if (needed < 0) {
                throw new IllegalArgumentException("a frame larger than 2 GiB");
            }
            buf = Arrays.copyOf(buf, Math.max(needed, buf.length * 2));
        }
    }
}
