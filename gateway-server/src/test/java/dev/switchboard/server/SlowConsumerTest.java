package dev.switchboard.server;

import dev.switchboard.core.Event;
import dev.switchboard.core.Ids;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.RunContext;
import dev.switchboard.core.spi.RunHandle;
import dev.switchboard.core.spi.RunRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** A client that stops reading is dropped at the byte bound; the run goes on unslowed. */
class SlowConsumerTest {
    static final int DELTAS = 10_000;
    static final int PIECE = 100;

    /** Streams one long answer as fast as it can. */
    static final class Firehose implements AgentRuntime {
        @Override
        public String id() {
            return "firehose";
        }

        @Override
        public RunHandle start(RunRequest request, RunContext ctx) {
            Thread t = new Thread(() -> {
                String id = Ids.next("msg");
                ctx.emit(new Event.MessageStarted(id, Role.ASSISTANT));
                String piece = "x".repeat(PIECE);
                for (int i = 0; i < DELTAS && !ctx.isDone(); i++) {
                    ctx.emit(new Event.TextDelta(id, piece));
                    if (i % 5 == 4) {
                        // Paced so that a client that reads keeps up; one that does not falls behind.
                        try {
                            Thread.sleep(1);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
                ctx.emit(new Event.MessageCompleted(id, "(long)", java.util.List.of()));
                ctx.finish();
            }, "firehose");
            t.start();
            return () -> { };
        }
    }

    @TempDir
    Path dir;

    @Test
    void aClientThatDoesNotReadIsClosedAndTheRunGoesOn() throws Exception {
        try (TestGateway g = TestGateway.start(dir, Map.of("max-outbound-bytes", 65_536,
                // Small kernel buffers, so that what the client does not read stays in the gateway.
                "socket-send-buffer-bytes", 16_384,
                "max-outbound-events", 1_000_000), new Firehose());
             Socket slow = new Socket()) {
            slow.setReceiveBufferSize(4096);
            slow.connect(new InetSocketAddress("127.0.0.1", g.port()), 5000);
            slow.getOutputStream().write(("GET /hai/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                    + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version: 13\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            byte[] ask = "{\"type\":\"user_message\",\"content\":\"go\",\"session_id\":\"fire\"}"
                    .getBytes(StandardCharsets.UTF_8);
            byte[] frame = new byte[6 + ask.length];
            frame[0] = (byte) 0x81;
            frame[1] = (byte) (0x80 | ask.length);
            System.arraycopy(ask, 0, frame, 6, ask.length);
            InputStream in = slow.getInputStream();
            StringBuilder head = new StringBuilder();
            while (!head.toString().endsWith("\r\n\r\n")) {
                head.append((char) in.read());
            }
            assertThat(head.toString()).startsWith("HTTP/1.1 101");
            slow.getOutputStream().write(frame);
            slow.getOutputStream().flush();

            // The run is not slowed by the client that does not read: it ends and is stored whole.
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (g.server.hub().store().messages("fire").size() < 2) {
                assertThat(System.nanoTime()).as("the run finished").isLessThan(deadline);
                Thread.sleep(20);
            }
            // The slow client was cut off: after what the kernel buffered, its stream ends.
            slow.setSoTimeout(20_000);
            long received = 0;
            byte[] buf = new byte[8192];
            for (int n; (n = in.read(buf)) > 0; ) {
                received += n;
            }
            assertThat(received).as("bytes the slow client got before the end").isLessThan((long) DELTAS * PIECE);
        }
    }
}
