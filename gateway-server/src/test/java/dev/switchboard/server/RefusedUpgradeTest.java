package dev.switchboard.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** A WebSocket upgrade the gateway refuses is answered and its connection closed. */
class RefusedUpgradeTest {
    @TempDir
    Path dir;

    /** What a raw keep-alive upgrade request got: the response text, and whether the server then closed. */
    private record Answer(String text, boolean closedByServer) {
        String statusLine() {
            return text.lines().findFirst().orElse("");
        }
    }

    private static Answer upgrade(int port, String pathAndQuery) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(5_000);
            s.getOutputStream().write(("GET " + pathAndQuery + " HTTP/1.1\r\n"
                    + "Host: 127.0.0.1:" + port + "\r\n"
                    + "Connection: keep-alive, Upgrade\r\n"
                    + "Upgrade: websocket\r\n"
                    + "Sec-WebSocket-Version: 13\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            InputStream in = s.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] buf = new byte[4096];
            try {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    got.write(buf, 0, n);
                }
                return new Answer(got.toString(StandardCharsets.UTF_8), true);
            } catch (SocketTimeoutException stillOpen) {
                return new Answer(got.toString(StandardCharsets.UTF_8), false);
            }
        }
    }

    @Test
    void aMalformedCursorGets400AndTheConnectionIsClosed() throws IOException {
        try (TestGateway g = TestGateway.start(dir)) {
            Answer a = upgrade(g.port(), "/hai/ws?session_id=s&last_seq=x");
            assertThat(a.statusLine()).startsWith("HTTP/1.1 400");
            assertThat(a.text()).contains("last_seq");
            assertThat(a.closedByServer()).isTrue();
        }
    }

    @Test
    void aSharedPathQueryNamingTwoDialectsConversationsGets400NamingBoth() throws IOException {
        try (TestGateway g = TestGateway.start(dir)) {
            Answer a = upgrade(g.port(), "/ws?session_id=a&threadId=b");
            assertThat(a.statusLine()).startsWith("HTTP/1.1 400");
            assertThat(a.text()).contains("session_id of hai").contains("threadId of agui");
            assertThat(a.closedByServer()).isTrue();
        }
    }

    @Test
    void anUpgradeWithoutATokenGets401AndTheConnectionIsClosed() throws IOException {
        try (TestGateway g = TestGateway.start(dir, Map.of("jwt-secret", AuthServerTest.SECRET))) {
            Answer a = upgrade(g.port(), "/hai/ws");
            assertThat(a.statusLine()).startsWith("HTTP/1.1 401");
            assertThat(a.closedByServer()).isTrue();
        }
    }

    @Test
    void anUpgradePastTheClientsConnectionLimitGets429AndTheConnectionIsClosed() throws IOException {
        try (TestGateway g = TestGateway.start(dir, Map.of("max-connections-per-client", 1));
             WsClient held = g.connect("/hai/ws")) {
            Answer a = upgrade(g.port(), "/hai/ws");
            assertThat(a.statusLine()).startsWith("HTTP/1.1 429");
            assertThat(a.closedByServer()).isTrue();
        }
    }

    @Test
    void anUpgradeToAnUnknownPathGets404AndTheConnectionIsClosed() throws IOException {
        try (TestGateway g = TestGateway.start(dir)) {
            Answer a = upgrade(g.port(), "/nowhere");
            assertThat(a.statusLine()).startsWith("HTTP/1.1 404");
            assertThat(a.closedByServer()).isTrue();
        }
    }
}
