package dev.switchboard.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.AppenderBase;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.switchboard.core.Json;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.interfaces.RSAPrivateKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No token, key or secret reaches the log on any way a credential comes in: JWTs (HS256, RS256) as a
 * bearer header, a query parameter or a WebSocket subprotocol, on every dialect's WebSocket and HTTP
 * route, good, forged, expired and malformed (also with a broken percent-escape); Basic credentials;
 * A2H API keys, good and bad; and the upstream keys of the runtimes (the OpenAI API key, the client
 * token the AG-UI runtime forwards, its extra headers and a key in its URL's query) when the upstream
 * echoes them in an error.
 * Everything the gateway logs is captured at DEBUG, with exceptions and MDC, and searched for each
 * secret and its JWT and base64 parts.
 */
class SecretsNotLoggedTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final String JWT_SECRET = "jwt-secret-" + UUID.randomUUID() + "-long-enough";
    private static final String FORGING_SECRET = "forging-secret-" + UUID.randomUUID() + "-long";
    private static final String A2H_KEY = "a2h-key-" + UUID.randomUUID();
    private static final String WRONG_A2H_KEY = "a2h-wrong-" + UUID.randomUUID();
    private static final String OPENAI_KEY = "sk-test-" + UUID.randomUUID();
    private static final String UPSTREAM_HEADER_KEY = "upstream-key-" + UUID.randomUUID();
    private static final String BASIC_PASSWORD = "basic-password-" + UUID.randomUUID();
    private static final String URL_KEY = "url-key-" + UUID.randomUUID();

    @TempDir
    Path dir;
    private final LogCapture log = new LogCapture();
    /** Every secret the test sends or configures; none may appear in any logged line. */
    private final Set<String> secrets = new LinkedHashSet<>();

    @BeforeEach
    void capture() {
        log.start();
        secret(JWT_SECRET);
        secret(FORGING_SECRET);
        secret(A2H_KEY);
        secret(WRONG_A2H_KEY);
        secret(OPENAI_KEY);
        secret(UPSTREAM_HEADER_KEY);
        secret(BASIC_PASSWORD);
        secret(URL_KEY);
    }

    @AfterEach
    void release() {
        log.stop();
    }

    @Test
    void noJwtOrA2hCredentialIsLoggedWhetherItIsGoodForgedExpiredOrMalformed() throws Exception {
        Instant later = Instant.now().plusSeconds(600);
        String good = token(sign(JWT_SECRET, "alice", later));
        String forged = token(sign(FORGING_SECRET, "alice", later));
        String expired = token(sign(JWT_SECRET, "alice", Instant.now().minusSeconds(3600)));
        String garbage = token("not-a-jwt-" + UUID.randomUUID());
        String broken = token("eyJhbGciOiJIUzI1NiJ9." + UUID.randomUUID() + ".c2lnbmF0dXJl" + UUID.randomUUID());
        String basic = "Basic " + Base64.getEncoder().encodeToString(("alice:" + BASIC_PASSWORD).getBytes());
        secret(basic.substring(6));
        try (TestGateway g = TestGateway.start(dir, Map.of("jwt-secret", JWT_SECRET, "a2h-api-key", A2H_KEY))) {
            String voice = "/api/realtime/ws?conversationId=c-" + UUID.randomUUID();
            for (String path : List.of("/ws", "/hai/ws", "/agui/ws", voice)) {
                String sep = path.contains("?") ? "&" : "?";
                for (String t : List.of(forged, expired, garbage, broken)) {
                    assertThat(upgrade(g, path + sep + "token=" + t, Map.of())).isEqualTo(401);
                    assertThat(upgrade(g, path, Map.of("Authorization", "Bearer " + t))).isEqualTo(401);
                }
                assertThat(upgrade(g, path, Map.of("Authorization", basic))).isEqualTo(401);
                assertThat(upgrade(g, path + sep + "token=" + good, Map.of())).isEqualTo(101);
                assertThat(upgrade(g, path, Map.of("Authorization", "Bearer " + good))).isEqualTo(101);
            }
            // A token offered as a subprotocol (a browser trick) is no credential here, and not logged either.
            assertThat(subprotocolUpgrade(g, "/ws", good)).isEqualTo(401);
            // A query the server cannot decode (a bad percent-escape after the token).
            assertThat(rawStatus(g, "GET /ws?token=" + good + "%zz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version: 13\r\n\r\n")).isEqualTo(400);
            assertThat(rawStatus(g, "POST /agui?token=" + good + "%zz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")).isEqualTo(400);

            // The HTTP routes, with a run on each for the accepted token (the run's own paths log too).
            for (String t : List.of(forged, expired, garbage, broken)) {
                assertThat(post(g, "/agui", aguiInput("hello"), "Bearer " + t).statusCode()).isEqualTo(401);
                assertThat(post(g, "/agui?token=" + t, aguiInput("hello"), null).statusCode()).isEqualTo(401);
                assertThat(post(g, "/process", agentScopeInput("hello"), "Bearer " + t).statusCode()).isEqualTo(401);
            }
            assertThat(post(g, "/agui", aguiInput("hello"), basic).statusCode()).isEqualTo(401);
            assertThat(post(g, "/agui", aguiInput("please crash"), "Bearer " + good).body()).contains("RUN_ERROR");
            assertThat(post(g, "/agui?token=" + good, aguiInput("hello"), null).body()).contains("RUN_FINISHED");
            assertThat(post(g, "/process", agentScopeInput("hello"), "Bearer " + good).statusCode()).isEqualTo(200);
            try (WsClient c = g.connect("/ws?token=" + good)) {
                assertThat(c.ask("s-" + UUID.randomUUID(), "hello").untilCompleted()).isNotEmpty();
            }

            // A2H: the right key, a wrong one, a key in the wrong scheme, none.
            String pending = "/humanlayer/v1/agent/function_calls/pending";
            assertThat(get(g, pending, "Bearer " + A2H_KEY).statusCode()).isEqualTo(200);
            assertThat(get(g, pending, "Bearer " + WRONG_A2H_KEY).statusCode()).isEqualTo(401);
            assertThat(get(g, pending, "Basic " + A2H_KEY).statusCode()).isEqualTo(401);
            assertThat(get(g, pending, "Bearer " + good).statusCode()).isEqualTo(401);
            assertThat(get(g, pending + "?token=" + A2H_KEY, null).statusCode()).isEqualTo(401);
            String call = A2hServerTest.functionCall("call-" + UUID.randomUUID(), "send_email", null).toString();
            assertThat(post(g, "/humanlayer/v1/function_calls", call, "Bearer " + A2H_KEY).statusCode()).isEqualTo(201);
            assertThat(post(g, "/humanlayer/v1/function_calls", call, "Bearer " + WRONG_A2H_KEY).statusCode())
                    .isEqualTo(401);
        }
        assertThat(log.lines()).as("refusals are logged at DEBUG, and captured")
                .anyMatch(l -> l.startsWith("DEBUG") && l.contains("refused"));
        assertNoSecretLogged();
    }

    @Test
    void noRs256TokenIsLoggedWhetherItIsGoodOrSignedWithAnotherKey() throws Exception {
        KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
        rsa.initialize(2048);
        KeyPair keys = rsa.generateKeyPair();
        Path pem = AuthServerTest.publicKeyPem(dir, keys);
        Instant later = Instant.now().plusSeconds(600);
        String good = token(AuthServerTest.sign(new RSASSASigner((RSAPrivateKey) keys.getPrivate()),
                JWSAlgorithm.RS256, "carol", later));
        String other = token(AuthServerTest.sign(new RSASSASigner((RSAPrivateKey) rsa.generateKeyPair().getPrivate()),
                JWSAlgorithm.RS256, "carol", later));
        String hs = token(sign(JWT_SECRET, "carol", later));
        try (TestGateway g = TestGateway.start(dir.resolve("data"), Map.of("jwt-public-key", pem.toString()))) {
            for (String t : List.of(other, hs)) {
                assertThat(upgrade(g, "/ws?token=" + t, Map.of())).isEqualTo(401);
                assertThat(post(g, "/agui", aguiInput("hello"), "Bearer " + t).statusCode()).isEqualTo(401);
            }
            assertThat(post(g, "/agui", aguiInput("please crash"), "Bearer " + good).body()).contains("RUN_ERROR");
            assertThat(upgrade(g, "/ws", Map.of("Authorization", "Bearer " + good))).isEqualTo(101);
        }
        assertNoSecretLogged();
    }

    @Test
    void theOpenAiKeyIsNotLoggedWhenTheModelServerEchoesIt() throws Exception {
        try (EchoUpstream upstream = new EchoUpstream();
             TestGateway g = TestGateway.start(dir, Map.of("runtime", "openai", "openai-base-url",
                     upstream.url() + "/v1", "openai-api-key", OPENAI_KEY, "model", "gpt-test"))) {
            String body = post(g, "/agui", aguiInput("hello"), null).body();
            assertThat(body).contains("RUN_ERROR").contains("401").doesNotContain(OPENAI_KEY);
            assertThat(upstream.authorizations).contains("Bearer " + OPENAI_KEY);
        }
        assertThat(log.lines()).anyMatch(l -> l.contains("401"));
        assertNoSecretLogged();
    }

    @Test
    void theForwardedTokenTheUpstreamHeadersAndTheUrlsKeyAreNotLoggedWhenTheAgentEchoesThem() throws Exception {
        String good = token(sign(JWT_SECRET, "bob", Instant.now().plusSeconds(600)));
        Map<String, Object> options = new HashMap<>(Map.of("runtime", "agui", "agui-upstream-url",
                "", "agui-forward-token", true, "agui-upstream-header", "X-Upstream-Key: " + UPSTREAM_HEADER_KEY,
                "jwt-secret", JWT_SECRET));
        try (EchoUpstream upstream = new EchoUpstream()) {
            options.put("agui-upstream-url", upstream.url() + "/agent?key=" + URL_KEY);
            try (TestGateway g = TestGateway.start(dir, options)) {
                String body = post(g, "/agui", aguiInput("hello"), "Bearer " + good).body();
                assertThat(body).contains("RUN_ERROR").contains("401");
                try (WsClient c = g.connect("/ws?token=" + good)) {
                    assertThat(c.ask("s-" + UUID.randomUUID(), "hello").untilCompleted()).isNotEmpty();
                }
            }
            assertThat(upstream.authorizations).contains("Bearer " + good);
        }
        assertThat(log.lines()).anyMatch(l -> l.contains("401"));
        assertNoSecretLogged();
    }

    // ---- what is checked -----------------------------------------------------------------

    private void assertNoSecretLogged() {
        List<String> lines = log.lines();
        assertThat(lines).as("the gateway logged something at all").isNotEmpty();
        for (String s : secrets) {
            assertThat(lines).as("log lines holding a secret").noneMatch(l -> l.contains(s));
        }
    }

    /** Registers a secret with what could betray it: its JWT parts (but the header, which is no secret) and base64. */
    private void secret(String s) {
        secrets.add(s);
        String[] parts = s.split("\\.");
        if (parts.length == 3) {
            secrets.add(parts[1]);
            secrets.add(parts[2]);
        }
        secrets.add(Base64.getEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8)));
        secrets.add(Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8)));
    }

    private String token(String t) {
        secret(t);
        return t;
    }

    private static String sign(String secret, String subject, Instant expires) throws Exception {
        return AuthServerTest.sign(new MACSigner(secret.getBytes(StandardCharsets.UTF_8)), JWSAlgorithm.HS256,
                subject, expires);
    }

    // ---- clients --------------------------------------------------------------------------

    private static String aguiInput(String text) {
        return AguiHttp.input(UUID.randomUUID().toString(), text).toString();
    }

    private static String agentScopeInput(String text) {
        return AgentScopeServerTest.request("s-" + UUID.randomUUID(), text).toString();
    }

    private static HttpResponse<String> post(TestGateway g, String path, String body, String authorization)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.port() + path))
                .timeout(Duration.ofSeconds(20)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(TestGateway g, String path, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.port() + path))
                .timeout(Duration.ofSeconds(20));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The status of a WebSocket upgrade with these headers: 101 when it opened (and was closed at once). */
    private static int upgrade(TestGateway g, String pathAndQuery, Map<String, String> headers) {
        WebSocket.Builder b = HTTP.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5));
        headers.forEach(b::header);
        return status(b, g, pathAndQuery);
    }

    private static int subprotocolUpgrade(TestGateway g, String path, String token) {
        return status(HTTP.newWebSocketBuilder().subprotocols("hai", token), g, path);
    }

    private static int status(WebSocket.Builder b, TestGateway g, String pathAndQuery) {
        try {
            WebSocket ws = b.buildAsync(URI.create("ws://127.0.0.1:" + g.port() + pathAndQuery),
                    new WebSocket.Listener() { }).join();
            ws.sendClose(WebSocket.NORMAL_CLOSURE, "").join();
            return 101;
        } catch (CompletionException e) {
            if (e.getCause() instanceof java.net.http.WebSocketHandshakeException h) {
                return h.getResponse().statusCode();
            }
            throw e;
        }
    }

    /** Sends a request as written, for what a client library would refuse to send; the answer's status. */
    private static int rawStatus(TestGateway g, String request) throws IOException {
        try (Socket s = new Socket("127.0.0.1", g.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            InputStream in = s.getInputStream();
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = in.read()) >= 0 && c != '\n') {
                line.append((char) c);
            }
            String[] words = line.toString().split(" ");
            return words.length > 1 ? Integer.parseInt(words[1]) : -1;
        }
    }

    /** An upstream that refuses every request with 401 and echoes the credentials it got in its error body. */
    private static final class EchoUpstream implements AutoCloseable {
        private final HttpServer server;
        final List<String> authorizations = new CopyOnWriteArrayList<>();

        EchoUpstream() throws IOException {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            server.createContext("/", this::refuse);
            server.start();
        }

        String url() {
            return "http://127.0.0.1:" + server.getAddress().getPort();
        }

        private void refuse(HttpExchange ex) throws IOException {
            try (ex) {
                ex.getRequestBody().readAllBytes();
                String auth = String.valueOf(ex.getRequestHeaders().getFirst("Authorization"));
                authorizations.add(auth);
                String echoed = "credentials refused: Authorization=" + auth + " X-Upstream-Key="
                        + ex.getRequestHeaders().getFirst("X-Upstream-Key");
                byte[] body = Json.object().set("error", Json.object().put("message", echoed)).toString()
                        .getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().set("Content-Type", "application/json");
                ex.sendResponseHeaders(401, body.length);
                try (OutputStream out = ex.getResponseBody()) {
                    out.write(body);
                }
            }
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    /**
     * Everything logged while it runs, at DEBUG for the gateway's loggers: each line with its
     * logger, message, MDC, key-value pairs and the exception with its causes.
     */
    private static final class LogCapture extends AppenderBase<ILoggingEvent> {
        private final List<String> lines = new CopyOnWriteArrayList<>();
        private Logger gateway;
        private Level levelBefore;

        @Override
        public void start() {
            LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
            setContext(context);
            super.start();
            gateway = context.getLogger("dev.switchboard");
            levelBefore = gateway.getLevel();
            gateway.setLevel(Level.DEBUG);
            context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).addAppender(this);
        }

        @Override
        public void stop() {
            ((LoggerContext) getContext()).getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).detachAppender(this);
            gateway.setLevel(levelBefore);
            super.stop();
        }

        @Override
        protected void append(ILoggingEvent e) {
            lines.add(e.getLevel() + " " + e.getLoggerName() + " " + e.getFormattedMessage() + " "
                    + e.getMDCPropertyMap() + " " + e.getKeyValuePairs()
                    + (e.getThrowableProxy() == null ? "" : "\n" + ThrowableProxyUtil.asString(e.getThrowableProxy())));
        }

        List<String> lines() {
            // Lines logged by threads that finish after the gateway stopped have had their moment.
            try {
                TimeUnit.MILLISECONDS.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new ArrayList<>(lines);
        }
    }
}
