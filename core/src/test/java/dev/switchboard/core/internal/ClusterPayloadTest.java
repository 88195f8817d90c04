package dev.switchboard.core.internal;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.EventCodec;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClusterPayloadTest {

    private static Envelope roundTrip(Envelope env) {
        byte[] payload = ClusterPayload.encode(env, EventCodec.toJson(env.event()));
        return ClusterPayload.decode(env.conversationId(), env.seq(), payload);
    }

    @Test
    void anEventComesBackAsItWasEmittedWithItsRunAndTime() {
        List<Envelope> sent = List.of(
                new Envelope("conv", "run-1", 7, 1_763_800_000_123L, new Event.TextDelta("msg-1", "line one\nline two")),
                new Envelope("conv", null, 8, 0, new Event.RunFailed(ErrorCode.UNAVAILABLE, "gone\n\"quoted\"")),
                new Envelope("conv", "run-\u00e9\ud83d\ude00", 9, 5, new Event.TextDelta("m", "\ud83d\ude00 emoji")));
        for (Envelope env : sent) {
            assertThat(roundTrip(env)).isEqualTo(env);
        }
    }

    @Test
    void aPayloadWithoutItsPartsIsRefusedNamingTheEvent() {
        assertThatThrownBy(() -> ClusterPayload.decode("conv", 3, "12345".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("event 3 of conversation conv");
    }
}
