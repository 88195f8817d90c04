package dev.switchboard.store.sqlite;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A segment's payload bytes are exactly what the driver would have made of its text. */
class Utf8PayloadTest {
    @Test
    void everyKindOfCharacterIsEncodedAsStringGetBytesEncodesIt() {
        Utf8Payload utf8 = new Utf8Payload();
        List<String> texts = List.of("", "plain ascii [0,{\"type\":\"text_delta\"},2,\"lo\"]", "caf\u00e9 \u00ff",
                "\u0080\u07ff\u0800\u20ac\u2713\uffff", "\ud83d\ude42 and \ud83c\udf0d", "\u4e2d\u6587",
                "lone high \ud83d", "lone high \ud83d then text", "lone low \ude42 here", "\ude42\ud83d",
                "\ud83d\ud83d\ude42", "\u0000\u007f");
        for (String text : texts) {
            assertThat(utf8.encode(new StringBuilder(text))).as(text).isEqualTo(text.getBytes(StandardCharsets.UTF_8));
        }
    }

    @Test
    void aShorterPayloadAfterALongerOneIsEncodedAloneAndALongOneGrowsTheScratch() {
        Utf8Payload utf8 = new Utf8Payload();
        String longText = "\u2713x".repeat(10_000);
        assertThat(utf8.encode(new StringBuilder(longText))).isEqualTo(longText.getBytes(StandardCharsets.UTF_8));
        assertThat(utf8.encode(new StringBuilder("[0,\"short\"]"))).isEqualTo("[0,\"short\"]".getBytes(StandardCharsets.UTF_8));
        String ascii = "y".repeat(70_000);
        assertThat(utf8.encode(new StringBuilder(ascii))).isEqualTo(ascii.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aPayloadLongerThanASegmentGrowsTheKeptScratchNoFurther() {
        Utf8Payload utf8 = new Utf8Payload();
        String segment = "s".repeat(SqliteConversationStore.SEGMENT_CHARS);
        assertThat(utf8.encode(new StringBuilder(segment))).isEqualTo(segment.getBytes(StandardCharsets.UTF_8));
        assertThat(utf8.keptBytes()).isEqualTo(Utf8Payload.KEPT_BYTES);
        String large = "\u2713".repeat(1 << 20);
        assertThat(utf8.encode(new StringBuilder(large))).isEqualTo(large.getBytes(StandardCharsets.UTF_8));
        assertThat(utf8.keptBytes()).isEqualTo(Utf8Payload.KEPT_BYTES);
        assertThat(utf8.encode(new StringBuilder("[0,\"after\"]"))).isEqualTo("[0,\"after\"]".getBytes(StandardCharsets.UTF_8));
    }
}
