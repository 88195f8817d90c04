package dev.switchboard.bench;

import dev.switchboard.core.Event;
import dev.switchboard.core.spi.DialectSession;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class OneGeneratorFrameWriterTest {

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void oneGeneratorWritesTheSameFramesAsOnePerFrame(Dialect dialect) throws Exception {
        DialectSession perFrame = dialect.newSession(dialect.adapter(), EventSamples.CONVERSATION);
        DialectSession shared = dialect.newSession(dialect.adapter(), EventSamples.CONVERSATION);
        try (BufferFrameWriter expected = BufferFrameWriter.keeping(dialect);
             OneGeneratorFrameWriter one = new OneGeneratorFrameWriter(dialect)) {
            long seq = EventSamples.prepare(perFrame, dialect, Event.Kind.TEXT_DELTA, expected);
            EventSamples.prepare(shared, dialect, Event.Kind.TEXT_DELTA, one);
            for (int i = 0; i < 3; i++) {
                perFrame.encode(EventSamples.envelope(EventSamples.sample(Event.Kind.TEXT_DELTA), seq + i), expected);
                shared.encode(EventSamples.envelope(EventSamples.sample(Event.Kind.TEXT_DELTA), seq + i), one);

                byte[] last = expected.kept().get(expected.kept().size() - 1);
                assertThat(one.last()).isEqualTo(new String(last, StandardCharsets.UTF_8));
            }
        }
    }
}
