package dev.switchboard.server.internal;

import dev.switchboard.core.spi.Cursors;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class WebSocketConnectionTest {

    private static String withCursor(String frame, Cursors.Style style, long seq) {
        ByteBuf buf = Unpooled.buffer(frame.length()).writeBytes(frame.getBytes(StandardCharsets.UTF_8));
        try {
            WebSocketConnection.addCursor(buf, style, seq);
            return buf.toString(StandardCharsets.UTF_8);
        } finally {
            buf.release();
        }
    }

    @Test
    void theCursorBecomesTheLastFieldOfTheFramesObject() {
        assertThat(withCursor("{\"type\":\"x\"}", Cursors.Style.FIELD, 7)).isEqualTo("{\"type\":\"x\",\"seq\":7}");
        assertThat(withCursor("{}", Cursors.Style.FIELD, 10)).isEqualTo("{\"seq\":10}");
        assertThat(withCursor("{\"a\":{\"b\":1}}", Cursors.Style.FIELD, 1_234_567_890_123L))
                .isEqualTo("{\"a\":{\"b\":1},\"seq\":1234567890123}");
    }

    @Test
    void theMetadataStyleNestsTheCursorInAMetadataObject() {
        assertThat(withCursor("{\"type\":\"x\"}", Cursors.Style.METADATA, 90))
                .isEqualTo("{\"type\":\"x\",\"metadata\":{\"seq\":90}}");
        assertThat(withCursor("{}", Cursors.Style.METADATA, Long.MAX_VALUE))
                .isEqualTo("{\"metadata\":{\"seq\":" + Long.MAX_VALUE + "}}");
    }

    @Test
    void aFrameThatIsNotAnObjectIsLeftAsItIs() {
        assertThat(withCursor("[1,2]", Cursors.Style.FIELD, 3)).isEqualTo("[1,2]");
        assertThat(withCursor("", Cursors.Style.FIELD, 3)).isEmpty();
    }
}
