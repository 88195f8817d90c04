package dev.switchboard.bench;

import dev.switchboard.core.Event;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.DialectSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

class CodecSamplesTest {

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void everyEventEncodesInASessionPreparedForIt(Dialect dialect) {
        for (Event.Kind kind : Event.Kind.values()) {
            long[] framesAndBytes = CodecBench.wire(dialect, kind);
            assertThat(framesAndBytes[1] > 0).as(kind + " bytes").isEqualTo(framesAndBytes[0] > 0);
        }
        assertThat(CodecBench.wire(dialect, Event.Kind.TEXT_DELTA)[0]).as("a text delta is one frame").isEqualTo(1);
    }

    static String[] inboundKeys() {
        return InboundSamples.keys();
    }

    @ParameterizedTest
    @MethodSource("inboundKeys")
    void everyInboundSampleDecodesIntoCommands(String key) {
        Dialect d = InboundSamples.dialect(key);
        DialectSession session = d.newSession(d.adapter(), EventSamples.CONVERSATION);

        Decoded decoded = session.decode(InboundSamples.text(key));

        assertThat(decoded).isInstanceOf(Decoded.Commands.class);
        assertThat(((Decoded.Commands) decoded).commands()).isNotEmpty();
    }

    @Test
    void everyDialectHasInboundSamples() {
        for (Dialect d : Dialect.values()) {
            assertThat(InboundSamples.keys()).anyMatch(k -> k.startsWith(d.id + ":"));
        }
    }
}
