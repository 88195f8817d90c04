package dev.switchboard.bench;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

class TextDeltaCaseTest {

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void theGatewaysWriterWritesAsManyBytesPerDeltaAsTheBenchWriter(Dialect dialect) throws Exception {
        try (TextDeltaCase c = new TextDeltaCase(dialect)) {
            long bench = -c.encode() + c.encode();
            long gateway = -c.encodeServerWriter() + c.encodeServerWriter();
            assertThat(bench).isPositive();
            assertThat(gateway).isEqualTo(bench);
        }
    }
}
