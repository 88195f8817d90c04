package dev.switchboard.runtime.openai;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Principal;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.RunRequest;
import dev.switchboard.core.spi.Settings;
import dev.switchboard.core.testing.RecordingRunContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A model server at an https URL: its certificate is checked against the JDK's trust store and its
 * address, and the answer streams over TLS once it is trusted.
 */
class ModelOverTlsTest {
    private static final char[] PASSWORD = "changeit".toCharArray();
    @TempDir
    static Path dir;
    private static Path keystore;
    private HttpsServer model;

    /** A key and a self-signed certificate for 127.0.0.1, made with the JDK's keytool. */
    @BeforeAll
    static void makeCertificate() throws Exception {
        keystore = dir.resolve("model.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "model", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                "-dname", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1", "-storetype", "PKCS12",
                "-keystore", keystore.toString(), "-storepass", new String(PASSWORD))
                .redirectErrorStream(true).start();
        String said = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(keytool.exitValue()).as(said).isZero();
    }

    @BeforeEach
    void startModel() throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keystore)) {
            ks.load(in, PASSWORD);
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, PASSWORD);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(kmf.getKeyManagers(), null, null);
        model = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        model.setHttpsConfigurator(new HttpsConfigurator(tls));
        model.setExecutor(Executors.newCachedThreadPool());
        model.createContext("/v1/chat/completions", ex -> {
            try (ex) {
                ex.getRequestBody().readAllBytes();
                ex.getResponseHeaders().set("Content-Type", "text/event-stream");
                ex.sendResponseHeaders(200, 0);
                OutputStream out = ex.getResponseBody();
                out.write(("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Over TLS.\"},\"finish_reason\":null}]}\n\n"
                        + "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
                        + "data: [DONE]\n\n").getBytes(StandardCharsets.UTF_8));
            }
        });
        model.start();
    }

    @AfterEach
    void stop() {
        model.stop(0);
        System.clearProperty("javax.net.ssl.trustStore");
        System.clearProperty("javax.net.ssl.trustStorePassword");
        System.clearProperty("javax.net.ssl.trustStoreType");
    }

    private RecordingRunContext run() {
        Map<String, String> options = Map.of("openai-base-url", "https://127.0.0.1:" + model.getAddress().getPort() + "/v1",
                "model", "m", "upstream-timeout-seconds", "5");
        Settings settings = key -> Optional.ofNullable(options.get(key));
        RecordingRunContext ctx = new RecordingRunContext();
        try (AgentRuntime openai = new OpenAiRuntimeProvider().create(settings)) {
            openai.start(new RunRequest("c-1", "run-1", null, Principal.ANONYMOUS,
                    List.of(InputMessage.text("m-1", Role.USER, "hello")), List.of(), null, null, null, null), ctx);
            ctx.awaitEnd(Duration.ofSeconds(10));
        }
        return ctx;
    }

    @Test
    void aCertificateTheTrustStoreDoesNotHoldEndsTheRunWithAClearError() {
        Event end = run().awaitEnd(Duration.ZERO);

        assertThat(end).isInstanceOfSatisfying(Event.RunFailed.class, f -> {
            assertThat(f.code()).isEqualTo(ErrorCode.UPSTREAM_FAILED);
            assertThat(f.message()).startsWith("the connection to the model server at https://127.0.0.1:")
                    .containsIgnoringCase("certification path");
        });
    }

    @Test
    void aTrustedCertificateForTheAddressCarriesTheAnswer() {
        System.setProperty("javax.net.ssl.trustStore", keystore.toString());
        System.setProperty("javax.net.ssl.trustStorePassword", new String(PASSWORD));
        System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
        RecordingRunContext ctx = run();

        assertThat(ctx.awaitEnd(Duration.ZERO)).isInstanceOf(Event.RunFinished.class);
        assertThat(ctx.text()).isEqualTo("Over TLS.");
    }
}
