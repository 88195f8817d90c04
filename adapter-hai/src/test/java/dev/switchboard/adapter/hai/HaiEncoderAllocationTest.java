package dev.switchboard.adapter.hai;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.FrameWriter;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class HaiEncoderAllocationTest {

    /** Hands out one generator over a discarding stream, so only the encoder's own allocations count. */
    private static final class DiscardingFrameWriter implements FrameWriter {
        private final JsonGenerator generator;

        DiscardingFrameWriter() throws IOException {
            generator = Json.FACTORY.createGenerator(OutputStream.nullOutputStream());
        }

        @Override
        public JsonGenerator begin() {
            return generator;
        }

        @Override
        public void end() throws IOException {
            generator.flush();
        }
    }

    @Test
    void textDeltaEncodingAllocatesNothingPerEvent() throws IOException {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported());
        threads.setThreadAllocatedMemoryEnabled(true);

        HaiSession session = new HaiSession(10_000);
        FrameWriter out = new DiscardingFrameWriter();
        Envelope started = new Envelope("conv-1", "run-1", 1, 0, new Event.RunStarted(null));
        Envelope delta = new Envelope("conv-1", "run-1", 2, 0, new Event.TextDelta("msg-1", "a few words of text "));
        session.encode(started, out);
        for (int i = 0; i < 50_000; i++) {
            session.encode(delta, out);
        }

        int events = 100_000;
        long thread = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(thread);
        for (int i = 0; i < events; i++) {
            session.encode(delta, out);
        }
        long allocated = threads.getThreadAllocatedBytes(thread) - before;

        assertThat(allocated / events).as("bytes allocated per text delta").isZero();
    }
}
