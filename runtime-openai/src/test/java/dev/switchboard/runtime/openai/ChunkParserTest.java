package dev.switchboard.runtime.openai;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import dev.switchboard.core.UpstreamHttp;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ChunkParserTest {
    private final ChunkParser chunks = new ChunkParser();

    /** What reading one event's data found: the parser, the value, whether only whitespace followed. */
    private record Read(JsonParser parser, JsonNode value, boolean restIsBlank) {
    }

    /** Hands each of the stream's events to {@code reader}, as the model's connection does. */
    private static void events(String stream, Consumer<UpstreamHttp.SseView> reader) {
        try {
            new UpstreamHttp.SseLines().take(ByteBuffer.wrap(stream.getBytes(StandardCharsets.UTF_8)), reader, () -> true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private List<Read> read(String stream) {
        List<Read> out = new ArrayList<>();
        events(stream, event -> {
            try {
                JsonParser p = chunks.start(event);
                assertThat(p.nextToken()).isEqualTo(JsonToken.START_OBJECT);
                JsonNode value = p.readValueAsTree();
                boolean blank = chunks.restIsBlank(event);
                if (!blank) {
                    // As the turn does: the parser stopped before text it cannot go past.
                    chunks.drop();
                }
                out.add(new Read(p, value, blank));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        return out;
    }

    @Test
    void oneParserReadsEveryChunkOfAnAnswerEvenOneLongerThanItsBuffer() {
        String longText = "é".repeat(12_000);
        List<Read> reads = read("data: {\"a\":1}\n\ndata:{\"b\":\"" + longText + "\"}  \n\ndata: {\"c\":[true]}\n\n");

        assertThat(reads).extracting(r -> r.value().toString())
                .containsExactly("{\"a\":1}", "{\"b\":\"" + longText + "\"}", "{\"c\":[true]}");
        assertThat(reads).extracting(Read::restIsBlank).containsOnly(true);
        assertThat(reads).extracting(Read::parser).containsOnly(reads.get(0).parser());
    }

    @Test
    void textAfterTheValueIsSeenAndWhitespaceIsNot() {
        List<Read> reads = read("data: {\"a\":1} x\n\ndata: {\"a\":2}\ndata: \t \n\n");

        assertThat(reads).extracting(Read::restIsBlank).containsExactly(false, true);
        assertThat(reads.get(1).parser()).isNotSameAs(reads.get(0).parser());
    }

    @Test
    void aDroppedParserIsNotGivenAgain() {
        List<JsonParser> parsers = new ArrayList<>();
        events("data: {\"choices\": [oops\n\ndata: {\"a\":1}\n\n", event -> {
            try {
                JsonParser p = chunks.start(event);
                parsers.add(p);
                assertThat(p.nextToken()).isEqualTo(JsonToken.START_OBJECT);
                if (parsers.size() == 1) {
                    assertThatThrownBy(p::readValueAsTree).isInstanceOf(IOException.class);
                    chunks.drop();
                } else {
                    assertThat(p.readValueAsTree().toString()).isEqualTo("{\"a\":1}");
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });

        assertThat(parsers).hasSize(2).doesNotHaveDuplicates();
    }

    @Test
    void aParserIsGivenNoMoreThanTheLongestDocumentJsonReads() {
        String mib = "x".repeat(1 << 20);
        StringBuilder stream = new StringBuilder();
        for (int i = 0; i < 20; i++) {
            stream.append("data: {\"t\":\"").append(mib).append("\"}\n\n");
        }
        List<Read> reads = read(stream.toString());

        long max = Json.READ_CONSTRAINTS.getMaxDocumentLength();
        long chunk = 1 + ("{\"t\":\"" + mib + "\"}").length();
        int perParser = (int) (max / chunk);
        assertThat(reads).hasSize(20);
        assertThat(reads.subList(0, perParser)).extracting(Read::parser).containsOnly(reads.get(0).parser());
        assertThat(reads.get(perParser).parser()).isNotSameAs(reads.get(0).parser());
        assertThat(reads).extracting(Read::restIsBlank).containsOnly(true);
    }
}
