package dev.switchboard.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PluralTest {
    @Test
    void exactlyOneTakesTheSingularAndEveryOtherCountThePlural() {
        assertThat(Plural.of(1, "earlier message")).isEqualTo("1 earlier message");
        assertThat(Plural.of(0, "earlier message")).isEqualTo("0 earlier messages");
        assertThat(Plural.of(2, "WebSocket")).isEqualTo("2 WebSockets");
        assertThat(Plural.of(21, "active run")).isEqualTo("21 active runs");
    }
}
