package dev.switchboard.server.internal;

import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.InMemoryConversationStore;
import dev.switchboard.core.Principal;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Cursors;
import dev.switchboard.core.spi.WireAdapterProvider;
import dev.switchboard.core.testing.FinishingRuntime;
import dev.switchboard.server.Plugins;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

class WebSocketConnectionTest {
    private static final Pattern SEQ = Pattern.compile("\"seq\":(\\d+)");

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

    /** Each text frame's payload in {@code wire}, checking that each is one final, unmasked text frame with the shortest length. */
    private static List<String> textFrames(ByteBuf wire) {
        List<String> frames = new ArrayList<>();
        while (wire.isReadable()) {
            assertThat((int) wire.readUnsignedByte()).as("FIN and text opcode").isEqualTo(0x81);
            int length = wire.readUnsignedByte() & 0xFF;
            if (length == 126) {
                length = wire.readUnsignedShort();
                assertThat(length).as("a 16-bit length only from 126 on").isGreaterThanOrEqualTo(126);
            } else {
                assertThat(length).as("no mask, no 64-bit length here").isLessThan(126);
            }
            frames.add(wire.readCharSequence(length, StandardCharsets.UTF_8).toString());
        }
        return frames;
    }

    @Test
    void aDrainsFramesLeaveAsOneBufferAndOnlyEachEventsLastFrameCarriesItsCursor() {
        AdapterRegistry adapters = new AdapterRegistry(Plugins.builtIn().providers(WireAdapterProvider.class),
                AdapterContext.defaults());
        try (ConversationHub hub = ConversationHub.builder().store(new InMemoryConversationStore())
                .runtime(new FinishingRuntime()).build()) {
            WebSocketConnection conn = new WebSocketConnection(hub, adapters, "/agui", Map.of(), Principal.ANONYMOUS,
                    "client", adapters.all().get("agui"), 1000, 1 << 20, new ServerMetrics(new SimpleMeterRegistry()),
                    null);
            EmbeddedChannel channel = new EmbeddedChannel(conn);
            try {
                conn.opened();
                for (Object opening; (opening = channel.readOutbound()) != null; ) {
                    ((ByteBuf) opening).release();
                }
                String longText = "x".repeat(300);
                List<Event> events = List.of(new Event.RunStarted(null),
                        new Event.MessageStarted("msg_1", Role.ASSISTANT),
                        new Event.TextDelta("msg_1", "short"),
                        new Event.TextDelta("msg_1", longText),
                        // A whole message no delta of which was shown: three frames, start, content and end.
                        new Event.MessageCompleted("msg_2", "whole", List.of()));
                for (int i = 0; i < events.size(); i++) {
                    assertThat(conn.deliver(new Envelope("conv_1", "run_1", i + 1, 0, events.get(i)))).isTrue();
                }
                channel.runPendingTasks();

                ByteBuf wire = channel.readOutbound();
                assertThat(wire).as("the drain's frames").isNotNull();
                assertThat((Object) channel.readOutbound()).as("one buffer for the whole drain").isNull();
                List<String> frames;
                try {
                    frames = textFrames(wire);
                } finally {
                    wire.release();
                }
                List<String> cursors = new ArrayList<>();
                for (String f : frames) {
                    assertThat(f).startsWith("{").endsWith("}");
                    Matcher m = SEQ.matcher(f);
                    cursors.add(m.find() ? m.group(1) : null);
                }
                // The run's start is two frames (RUN_STARTED and its status), the whole message three; each
                // event's cursor is on its last frame only.
                assertThat(cursors).containsExactly(null, "1", "2", "3", "4", null, null, "5");
                assertThat(frames.get(0)).contains("RUN_STARTED");
                assertThat(frames.get(4)).contains(longText);
                assertThat(frames.get(5)).contains("TEXT_MESSAGE_START").contains("msg_2");
                assertThat(frames.get(7)).contains("TEXT_MESSAGE_END").contains("msg_2");
            } finally {
                channel.finishAndReleaseAll();
            }
        }
    }
}
