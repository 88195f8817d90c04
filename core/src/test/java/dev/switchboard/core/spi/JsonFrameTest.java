package dev.switchboard.core.spi;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.switchboard.core.Json;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** A frame built as bytes is byte for byte what the gateway's generator writes for the same values. */
class JsonFrameTest {
    private static final byte[] OPEN = JsonFrame.fragment("{\"k\":");
    private static final byte[] NEXT = JsonFrame.fragment(",\"n\":");
    private static final byte[] CLOSE = JsonFrame.fragment("}");

    @Test
    void everyCharIsEscapedAsTheGeneratorEscapesIt() throws IOException {
        for (int c = 0; c <= Character.MAX_VALUE; c++) {
            String value = "a" + (char) c + "z";
            assertThat(asBytes(value)).as("char U+%04X", c).isEqualTo(generated(value));
        }
    }

    @Test
    void randomTextWithPairsLoneSurrogatesAndControlsMatchesTheGenerator() throws IOException {
        Random random = new Random(20261123);
        char[] alphabet = {'a', 'Z', '0', ' ', '"', '\\', '/', '\n', '\r', '\t', '\b', '\f', '\u0000', '\u001f',
                '\u007f', '\u00e9', '\u07ff', '\u0800', '\u2028', '\u2603', '\uffff', '\ud83d', '\ude00'};
        for (int i = 0; i < 20_000; i++) {
            StringBuilder text = new StringBuilder();
            int length = random.nextInt(i % 100 == 0 ? 5_000 : 40);
            for (int j = 0; j < length; j++) {
                if (random.nextInt(8) == 0) {
                    text.appendCodePoint(0x10000 + random.nextInt(0x100000));
                } else {
                    text.append(alphabet[random.nextInt(alphabet.length)]);
                }
            }
            String value = text.toString();
            assertThat(asBytes(value)).as("text %s", value).isEqualTo(generated(value));
        }
    }

    @Test
    void numbersAreTheirDigits() throws IOException {
        List<Long> values = new ArrayList<>(List.of(0L, 1L, -1L, 9L, 10L, 99L, 100L, -10L,
                Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1, 1_732_320_000_000L, (long) Integer.MAX_VALUE,
                Integer.MAX_VALUE + 1L, 100_000_000L, 1_000_000_000_005L, 9_999_999_999_999_999L,
                10_000_000_000_000_000L, 10_000_000_000_000_001L, -10_000_000_000_000_001L));
        Random random = new Random(7);
        for (int i = 0; i < 10_000; i++) {
            values.add(random.nextLong() >> random.nextInt(64));
        }
        for (long value : values) {
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            try (JsonGenerator g = Json.FACTORY.createGenerator(expected)) {
                g.writeStartObject();
                g.writeNumberField("k", value);
                g.writeEndObject();
            }
            byte[] actual = JsonFrame.open().raw(OPEN).number(value).raw(CLOSE).toByteArray();
            assertThat(new String(actual)).isEqualTo(expected.toString());
        }
    }

    @Test
    void encodedTextBooleansAndNullsAreWrittenAsTheGeneratorWritesThem() throws IOException {
        String id = "msg \"1\" \u2603 \uD83D\uDE00";
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        try (JsonGenerator g = Json.FACTORY.createGenerator(expected)) {
            g.writeStartObject();
            g.writeStringField("k", id);
            g.writeBooleanField("n", true);
            g.writeBooleanField("n", false);
            g.writeNullField("n");
            g.writeEndObject();
        }
        // Longer than the builder's first buffer, so the encoded text has to make room for itself.
        String longId = "x".repeat(2_000);
        byte[] actual = JsonFrame.open().raw(OPEN).string(JsonText.of(id))
                .raw(NEXT).bool(true).raw(NEXT).bool(false).raw(NEXT).nullValue().raw(CLOSE).toByteArray();
        assertThat(new String(actual, java.nio.charset.StandardCharsets.UTF_8))
                .isEqualTo(expected.toString(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(JsonFrame.open().raw(OPEN).string(JsonText.of(longId)).raw(CLOSE).toByteArray())
                .isEqualTo(generated(longId));
    }

    @Test
    void aFrameGoesToItsWriterWholeAndTheBuilderIsReused() throws IOException {
        List<String> frames = new ArrayList<>();
        FrameWriter writer = new FrameWriter() {
            @Override
            public JsonGenerator begin() {
                throw new AssertionError("a built frame does not open the generator");
            }

            @Override
            public void end() {
                throw new AssertionError("a built frame does not open the generator");
            }

            @Override
            public void frame(byte[] json, int offset, int length) {
                frames.add(new String(json, offset, length, java.nio.charset.StandardCharsets.UTF_8));
            }
        };
        JsonFrame.open().raw(OPEN).string("a").raw(CLOSE).writeTo(writer);
        JsonFrame.open().raw(OPEN).string("x".repeat(100_000)).raw(CLOSE).writeTo(writer);
        JsonFrame first = JsonFrame.open();
        JsonFrame nested = JsonFrame.open();
        assertThat(nested).as("a frame begun while another is built has a builder of its own").isNotSameAs(first);
        nested.raw(OPEN).number(2).raw(CLOSE).writeTo(writer);
        first.raw(OPEN).number(1).raw(CLOSE).writeTo(writer);
        assertThat(JsonFrame.open()).as("the thread's builder, given back").isSameAs(first);
        assertThat(frames).hasSize(4);
        assertThat(frames.get(0)).isEqualTo("{\"k\":\"a\"}");
        assertThat(frames.get(1)).hasSize(100_008);
        assertThat(frames.subList(2, 4)).containsExactly("{\"k\":2}", "{\"k\":1}");
    }

    @Test
    void theDefaultFrameGoesThroughTheGenerator() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        FrameWriter writer = new FrameWriter() {
            private JsonGenerator generator;

            @Override
            public JsonGenerator begin() throws IOException {
                generator = Json.FACTORY.createGenerator(out);
                return generator;
            }

            @Override
            public void end() throws IOException {
                generator.close();
            }
        };
        JsonFrame.open().raw(OPEN).string("snow \u2603 \uD83D\uDE00").raw(CLOSE).writeTo(writer);
        assertThat(out.toByteArray()).isEqualTo(generated("snow \u2603 \uD83D\uDE00"));
    }

    @Test
    void aRepeatedPartIsEncodedAgainOnlyForAnotherValue() throws IOException {
        JsonFrame.RepeatedPart part = new JsonFrame.RepeatedPart(OPEN, CLOSE);

        byte[] first = part.of("m\u00e9\"1");
        assertThat(first).isEqualTo(generated("m\u00e9\"1"));
        assertThat(part.of(new String("m\u00e9\"1"))).as("the same value: the kept part").isSameAs(first);
        assertThat(part.of("m2")).isEqualTo(generated("m2"));
        assertThat(part.of("m\u00e9\"1")).as("a value asked for before the last one: encoded again")
                .isEqualTo(generated("m\u00e9\"1")).isNotSameAs(first);
    }

    private static byte[] asBytes(String value) {
        return JsonFrame.open().raw(OPEN).string(value).raw(CLOSE).toByteArray();
    }

    private static byte[] generated(String value) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator g = Json.FACTORY.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("k", value);
            g.writeEndObject();
        }
        return out.toByteArray();
    }
}
