package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.switchboard.core.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocketHandshakeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.interfaces.RSAPrivateKey;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Bearer-token authentication on the shared port, HS256 and RS256, and idle connections. */
class AuthServerTest {
    static final String SECRET = "a-test-secret-that-is-long-enough-for-hs256";

    @TempDir
    Path dir;

    static String hs256(String subject, Instant expires) throws Exception {
        return sign(new MACSigner(SECRET.getBytes()), JWSAlgorithm.HS256, subject, expires);
    }

    static String sign(JWSSigner signer, JWSAlgorithm alg, String subject, Instant expires) throws Exception {
        JWTClaimsSet claims = new JWTClaimsSet.Builder().subject(subject).expirationTime(Date.from(expires))
                .issueTime(new Date()).build();
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(alg).type(JOSEObjectType.JWT).build(), claims);
        jwt.sign(signer);
        return jwt.serialize();
    }

    private static int refusedStatus(TestGateway g, String pathAndQuery) {
        Throwable t = org.assertj.core.api.Assertions.catchThrowable(() -> g.connect(pathAndQuery).close());
        assertThat(t).isInstanceOf(CompletionException.class);
        assertThat(t.getCause()).isInstanceOf(WebSocketHandshakeException.class);
        return ((WebSocketHandshakeException) t.getCause()).getResponse().statusCode();
    }

    @Test
    void hs256TokensAreCheckedForSignatureExpiryAndPresence() throws Exception {
        try (TestGateway g = TestGateway.start(dir, Map.of("jwt-secret", SECRET))) {
            Instant later = Instant.now().plusSeconds(600);
            assertThat(refusedStatus(g, "/ws")).isEqualTo(401);
            assertThat(refusedStatus(g, "/ws?token=not.a.jwt")).isEqualTo(401);
            String forged = sign(new MACSigner("another-secret-that-is-long-enough-too!!".getBytes()),
                    JWSAlgorithm.HS256, "alice", later);
            assertThat(refusedStatus(g, "/ws?token=" + forged)).isEqualTo(401);
            assertThat(refusedStatus(g, "/ws?token=" + hs256("alice", Instant.now().minusSeconds(3600)))).isEqualTo(401);
            try (WsClient c = g.connect("/ws?token=" + hs256("alice", later))) {
                assertThat(c.ask("alice-1", "hello").untilCompleted()).isNotEmpty();
            }
        }
    }

    @Test
    void aBearerHeaderAuthenticatesHttpAndAConversationBelongsToItsCreator() throws Exception {
        try (TestGateway g = TestGateway.start(dir, Map.of("jwt-secret", SECRET))) {
            HttpClient http = HttpClient.newHttpClient();
            String thread = UUID.randomUUID().toString();
            String body = Json.object().put("threadId", thread).put("runId", "r1").set("messages",
                    Json.MAPPER.readTree("[{\"id\":\"m1\",\"role\":\"user\",\"content\":\"hello\"}]")).toString();
            URI agui = URI.create("http://127.0.0.1:" + g.port() + "/agui");
            HttpResponse<String> anonymous = http.send(HttpRequest.newBuilder(agui)
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(anonymous.statusCode()).isEqualTo(401);
            assertThat(anonymous.headers().firstValue("www-authenticate")).contains("Bearer");
            assertThat(Json.MAPPER.readTree(anonymous.body()).path("error").path("code").asText()).isEqualTo("auth_failed");

            HttpResponse<String> alice = http.send(HttpRequest.newBuilder(agui)
                    .header("Authorization", "Bearer " + hs256("alice", Instant.now().plusSeconds(600)))
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(alice.statusCode()).isEqualTo(200);
            assertThat(alice.body()).contains("RUN_FINISHED");

            try (WsClient bob = g.connect("/hai/ws?token=" + hs256("bob", Instant.now().plusSeconds(600)))) {
                JsonNode error = bob.ask(thread, "let me in").next();
                assertThat(error.path("error_code").asText()).isEqualTo("invalid_session");
            }
        }
    }

    /** Writes the pair's public key as the PEM file {@code --jwt-public-key} reads, in {@code dir}. */
    static Path publicKeyPem(Path dir, KeyPair keys) throws java.io.IOException {
        Path pem = dir.resolve("key.pem");
        Files.writeString(pem, "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(keys.getPublic().getEncoded())
                + "\n-----END PUBLIC KEY-----\n");
        return pem;
    }

    @Test
    void rs256TokensAreVerifiedWithThePublicKeyFile() throws Exception {
        KeyPairGenerator gen = KeyPairGenerator.getInstance("RSA");
        gen.initialize(2048);
        KeyPair keys = gen.generateKeyPair();
        Path pem = publicKeyPem(dir, keys);
        try (TestGateway g = TestGateway.start(dir.resolve("data"),
                Map.of("jwt-public-key", pem.toString()))) {
            Instant later = Instant.now().plusSeconds(600);
            String good = sign(new RSASSASigner((RSAPrivateKey) keys.getPrivate()), JWSAlgorithm.RS256, "carol", later);
            try (WsClient c = g.connect("/ws?token=" + good)) {
                assertThat(c.ask("carol-1", "hello").untilCompleted()).isNotEmpty();
            }
            KeyPair other = gen.generateKeyPair();
            String bad = sign(new RSASSASigner((RSAPrivateKey) other.getPrivate()), JWSAlgorithm.RS256, "carol", later);
            assertThat(refusedStatus(g, "/ws?token=" + bad)).isEqualTo(401);
            assertThat(refusedStatus(g, "/ws?token=" + hs256("carol", later))).isEqualTo(401);
        }
    }

    @Test
    void aShortSecretOrBothKeysStopStartUp() throws Exception {
        GatewayConfig shortSecret = GatewayConfig.builder().set("jwt-secret", "short")
                .set(GatewayConfig.Option.DATA_DIR, dir.toString()).build();
        assertThatThrownBy(() -> GatewayServer.builder(shortSecret).build())
                .hasMessageContaining("--jwt-secret").hasMessageContaining("32 bytes");
        Path pem = dir.resolve("k.pem");
        Files.writeString(pem, "not a key");
        GatewayConfig both = GatewayConfig.builder().set("jwt-secret", SECRET)
                .set("jwt-public-key", pem.toString())
                .set(GatewayConfig.Option.DATA_DIR, dir.toString()).build();
        assertThatThrownBy(() -> GatewayServer.builder(both).build()).hasMessageContaining("set one");
        GatewayConfig badPem = GatewayConfig.builder().set("jwt-public-key", pem.toString())
                .set(GatewayConfig.Option.DATA_DIR, dir.toString()).build();
        assertThatThrownBy(() -> GatewayServer.builder(badPem).build())
                .hasMessageContaining("--jwt-public-key").hasMessageContaining("PEM");
    }

    @Test
    void aWebSocketThatSendsNothingIsClosedAfterTheIdleTimeout() {
        try (TestGateway g = TestGateway.start(dir, Map.of("idle-timeout-seconds", 1));
             WsClient c = g.connect("/ws")) {
            assertThat(c.awaitClose()).isEqualTo(1001);
        }
    }
}
