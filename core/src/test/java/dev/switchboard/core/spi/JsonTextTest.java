package dev.switchboard.core.spi;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.SerializableString;
import dev.switchboard.core.Json;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Text encoded once: the kept encoding is reused only while the value stays the same, and escapes as a String would. */
class JsonTextTest {
    @Test
    void aRepeatedValueKeepsItsEncodingUntilTheValueChanges() {
        JsonText.Repeated id = new JsonText.Repeated();
        SerializableString first = id.of("msg_1");
        assertThat(id.of("msg_1")).isSameAs(first);
        assertThat(id.of(new String("msg_1"))).as("an equal value, another instance").isSameAs(first);
        SerializableString second = id.of("msg_2");
        assertThat(second.getValue()).isEqualTo("msg_2");
        assertThat(id.of("msg_1").getValue()).as("back to the first value: encoded anew").isEqualTo("msg_1");
        assertThatThrownBy(() -> id.of(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void encodedTextIsWrittenExactlyAsTheSameStringWouldBe() throws Exception {
        String text = "quote \" backslash \\ newline \n tab \t snowman \u2603 emoji \uD83D\uDE00 control \u0001";
        ByteArrayOutputStream viaString = new ByteArrayOutputStream();
        try (JsonGenerator g = Json.FACTORY.createGenerator(viaString)) {
            g.writeStartObject();
            g.writeStringField(text, text);
            g.writeEndObject();
        }
        ByteArrayOutputStream viaEncoded = new ByteArrayOutputStream();
        try (JsonGenerator g = Json.FACTORY.createGenerator(viaEncoded)) {
            g.writeStartObject();
            g.writeFieldName(JsonText.of(text));
            g.writeString(new JsonText.Repeated().of(text));
            g.writeEndObject();
        }
        // Bytes, as the frames are written: through the UTF-8 generator the gateway uses.
        assertThat(viaEncoded.toByteArray()).isEqualTo(viaString.toByteArray());
    }
}
