package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * A HAI client on a phone that goes to sleep mid-answer: it asks for a long answer, stops reading
 * for many seconds, then reads on. It speaks WebSocket on a plain socket with a small receive
 * buffer, so the kernel holds little for it and the gateway's outbound bound is what it meets:
 * the gateway closes it with 1013, and it resumes from its cursor.
 */
final class SoakStalledReader extends SoakClient {
    static final String PROMPT = "benchmark 2000";

    private Socket socket;
    private DataInputStream in;
    private OutputStream out;

    SoakStalledReader(int index, String conversation, SoakPlan plan) {
        super(index, SoakDialect.HAI, conversation, true, plan);
    }

    @Override
    void open() throws InterruptedException {
        connect();
    }

    private void connect() throws InterruptedException {
        connect(() -> {
            try {
                handshake();
            } catch (IOException e) {
                close();
                throw e;
            }
        });
    }

    private void handshake() throws IOException {
        socket = new Socket();
        socket.setReceiveBufferSize(4096);
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        socket.setSoTimeout((int) plan.frameWait.toMillis());
        in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 1024));
        out = socket.getOutputStream();
        byte[] key = new byte[16];
        random.nextBytes(key);
        out.write(("GET " + dialect.wsPath(conversation, cursor) + " HTTP/1.1\r\nHost: 127.0.0.1:" + port
                + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: "
                + Base64.getEncoder().encodeToString(key) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("the upgrade got no answer");
            }
            head.append((char) b);
        }
        if (!head.toString().startsWith("HTTP/1.1 101")) {
            throw new IOException("upgrade refused: " + head.toString().lines().findFirst().orElse(""));
        }
    }

    /** Sends one masked frame (clients must mask). */
    private void send(int opcode, byte[] payload) throws IOException {
        byte[] mask = new byte[4];
        random.nextBytes(mask);
        int n = payload.length;
        byte[] frame = new byte[2 + (n < 126 ? 0 : 2) + 4 + n];
        int i = 0;
        frame[i++] = (byte) (0x80 | opcode);
        if (n < 126) {
            frame[i++] = (byte) (0x80 | n);
        } else {
            frame[i++] = (byte) (0x80 | 126);
            frame[i++] = (byte) (n >> 8);
            frame[i++] = (byte) n;
        }
        System.arraycopy(mask, 0, frame, i, 4);
        i += 4;
        for (int j = 0; j < n; j++) {
            frame[i + j] = (byte) (payload[j] ^ mask[j & 3]);
        }
        out.write(frame);
        out.flush();
    }

    /** The next text frame as JSON, answering pings; a close frame ends the connection with its code. */
    private JsonNode next() throws IOException {
        StringBuilder text = new StringBuilder();
        while (true) {
            int b0 = in.readUnsignedByte();
            int b1 = in.readUnsignedByte();
            long n = b1 & 0x7f;
            if (n == 126) {
                n = in.readUnsignedShort();
            } else if (n == 127) {
                n = in.readLong();
            }
            byte[] payload = new byte[(int) n];
            in.readFully(payload);
            plan.bytesReceived.addAndGet(n);
            int opcode = b0 & 0x0f;
            if (opcode == 0x8) {
                int code = n >= 2 ? ((payload[0] & 0xff) << 8) | (payload[1] & 0xff) : 1005;
                throw new ClosedByGateway(code);
            } else if (opcode == 0x9) {
                send(0xA, payload);
            } else if (opcode == 0x1 || opcode == 0x0) {
                text.append(new String(payload, StandardCharsets.UTF_8));
                if ((b0 & 0x80) != 0) {
                    return Json.MAPPER.readTree(text.toString());
                }
            }
        }
    }

    /** The gateway's close frame. */
    private static final class ClosedByGateway extends IOException {
        final int code;

        ClosedByGateway(int code) {
            super("close " + code);
            this.code = code;
        }
    }

    @Override
    void run(int dropAt) throws Exception {
        prompt = PROMPT;
        state = "run '" + prompt + "'";
        sendRequest();
        int events = 0;
        int stallAt = 20 + random.nextInt(40);
        // Lost with the connection before any event of the run: the request may be lost too.
        boolean unsure = false;
        while (true) {
            JsonNode frame;
            try {
                socket.setSoTimeout(unsure ? 3_000 : (int) plan.frameWait.toMillis());
                frame = next();
            } catch (java.net.SocketTimeoutException e) {
                if (!unsure) {
                    stuck = true;
                    throw new IllegalStateException("no frame for " + plan.frameWait.toSeconds() + " s; " + traced());
                }
                plan.resentRequests.incrementAndGet();
                unsure = false;
                sendRequest();
                continue;
            } catch (IOException e) {
                unsure = events == 0;
                trace("lost: " + e);
                // Cut off as too slow (1013, or the socket closed when the close frame could not be sent), or the kill.
                lost(e.toString(), e instanceof ClosedByGateway c ? c.code == 1013 ? Loss.TOO_SLOW : Loss.ERROR
                        : Loss.UNEXPLAINED);
                close();
                connect();
                continue;
            }
            long seq = dialect.seq(frame);
            if (seq < 0) {
                if (retryAfter(frame)) {
                    sendRequest();
                }
                continue;
            }
            record(seq, frame);
            unsure = false;
            if (dialect.endsRun(frame, prompt)) {
                return;
            }
            if (++events == stallAt) {
                trace("stalls at " + seq);
                Thread.sleep(12_000 + random.nextInt(4_000));
            }
        }
    }

    private void sendRequest() throws InterruptedException {
        while (true) {
            try {
                send(0x1, dialect.runRequest(conversation, prompt).getBytes(StandardCharsets.UTF_8));
                return;
            } catch (IOException e) {
                lost("the request could not be sent: " + e, Loss.ERROR);
                close();
                connect();
            }
        }
    }

    @Override
    void malformed(String input) {
        // This client only sleeps on its answers.
    }

    @Override
    void close() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }
}
