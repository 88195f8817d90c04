package dev.switchboard.server;

import dev.switchboard.core.Json;
import dev.switchboard.server.internal.PlaygroundFiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The playground's files over HTTP, and the option that turns the page on and off. */
class PlaygroundServerTest {
    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension();

    private static final HttpClient http = HttpClient.newHttpClient();
    /** What the page's files reference: stylesheets, scripts, icons and module imports. */
    private static final Pattern REFERENCE = Pattern.compile(
            "(?:href|src)=\"([^\"]+)\"|from '([^']+)'|import\\('([^']+)'\\)|fetch\\('(/playground/[^']+)'\\)");

    @TempDir
    Path dir;

    private static HttpResponse<String> get(int port, String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void thePageIsServedAtTheRootWithItsContentTypeAndNoCache() throws Exception {
        HttpResponse<String> page = get(gateway.port(), "/");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("content-type")).hasValue("text/html; charset=utf-8");
        assertThat(page.headers().firstValue("cache-control")).hasValue("no-cache");
        assertThat(page.headers().firstValue("x-content-type-options")).hasValue("nosniff");
        assertThat(page.headers().firstValue("content-security-policy").orElseThrow()).contains("default-src 'self'");
        assertThat(page.body()).contains("<title>Switchboard playground</title>");
        String etag = page.headers().firstValue("etag").orElseThrow();
        HttpResponse<String> again = get(gateway.port(), "/", "If-None-Match", etag);
        assertThat(again.statusCode()).isEqualTo(304);
        assertThat(again.body()).isEmpty();
    }

    @Test
    void everyFileThePageReferencesIsInTheJarAndNothingComesFromElsewhere() throws Exception {
        Map<String, String> types = Map.of("js", "text/javascript; charset=utf-8", "css", "text/css; charset=utf-8",
                "svg", "image/svg+xml", "json", "application/json", "html", "text/html; charset=utf-8");
        Set<String> seen = new LinkedHashSet<>();
        Deque<String> todo = new ArrayDeque<>(java.util.List.of("/"));
        while (!todo.isEmpty()) {
            String path = todo.pop();
            if (!seen.add(path)) {
                continue;
            }
            HttpResponse<String> r = get(gateway.port(), path);
            assertThat(r.statusCode()).as(path).isEqualTo(200);
            String ext = path.equals("/") ? "html" : path.substring(path.lastIndexOf('.') + 1);
            assertThat(r.headers().firstValue("content-type")).as(path).hasValue(types.get(ext));
            assertThat(r.body()).as(path).doesNotContainPattern("(?:src|href)=\"(?:https?:)?//")
                    .doesNotContainPattern("from '(?:https?:)?//").doesNotContain("@import");
            Matcher m = REFERENCE.matcher(r.body());
            while (m.find()) {
                String ref = m.group(1) != null ? m.group(1) : m.group(2) != null ? m.group(2)
                        : m.group(3) != null ? m.group(3) : m.group(4);
                if (ref.startsWith("#")) {
                    continue;
                }
                String base = path.equals("/") ? "/" : path.substring(0, path.lastIndexOf('/') + 1);
                todo.push(URI.create("http://x" + base).resolve(ref).getPath());
            }
        }
        assertThat(seen).contains("/playground/playground.css", "/playground/js/main.js",
                "/playground/js/dialects/hai.js", "/playground/js/dialects/agui-ws.js",
                "/playground/js/dialects/agui-sse.js", "/playground/js/dialects/voiceassist.js",
                "/playground/js/dialects/agentscope.js", "/playground/info.json");
    }

    @Test
    void infoTellsThePageWhetherItNeedsATokenAndWhichRuntimeAnswers() throws Exception {
        var info = Json.MAPPER.readTree(get(gateway.port(), "/playground/info.json").body());
        assertThat(info.get("auth").asBoolean()).isFalse();
        assertThat(info.get("runtime").asText()).isEqualTo("demo");
        try (TestGateway g = TestGateway.start(dir, Map.of("jwt-secret", AuthServerTest.SECRET))) {
            assertThat(get(g.port(), "/").statusCode()).as("the page itself needs no token").isEqualTo(200);
            assertThat(Json.MAPPER.readTree(get(g.port(), "/playground/info.json").body()).get("auth").asBoolean()).isTrue();
        }
    }

    @Test
    void unknownFilesFoldersHiddenFilesAndTraversalsGet404() throws Exception {
        for (String path : new String[] {"/playground/nope.js", "/playground/js", "/playground/js/",
                "/playground/../logback.xml", "/playground/%2e%2e/logback.xml", "/playground/js/%2e%2e/%2e%2e/logback.xml",
                "/playground/logback.xml", "/playground/.hidden.js", "/playground/js//main.js", "/playground/main.js.map",
                "/playground/", "/index.html", "/playground/js/main.JS"}) {
            HttpResponse<String> r = get(gateway.port(), path);
            assertThat(r.statusCode()).as(path).isEqualTo(404);
            assertThat(r.headers().firstValue("content-type")).as(path).hasValue("application/json");
        }
    }

    @Test
    void headAnswersTheHeadersAndOtherMethodsAreRefused() throws Exception {
        HttpResponse<String> head = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port()
                + "/playground/js/main.js")).method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(head.statusCode()).isEqualTo(200);
        assertThat(head.body()).isEmpty();
        assertThat(Long.parseLong(head.headers().firstValue("content-length").orElseThrow())).isPositive();
        HttpResponse<String> post = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/"))
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(post.statusCode()).isEqualTo(405);
        assertThat(post.headers().firstValue("allow")).hasValue("GET, HEAD");
    }

    @Test
    void playgroundFalseTurnsThePageOff() throws Exception {
        try (TestGateway g = TestGateway.start(dir, Map.of("playground", false))) {
            assertThat(get(g.port(), "/").statusCode()).isEqualTo(404);
            assertThat(get(g.port(), "/playground/info.json").statusCode()).isEqualTo(404);
            assertThat(get(g.port(), "/healthz").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void thePlaygroundIsOnByDefaultOnLoopbackOnlyAndTheOptionDecidesWhenGiven() {
        assertThat(GatewayConfig.defaults().playground()).isTrue();
        assertThat(config("host", "localhost").playground()).isTrue();
        assertThat(config("host", "::1").playground()).isTrue();
        assertThat(config("host", "0.0.0.0").playground()).isFalse();
        assertThat(GatewayConfig.builder().set("host", "0.0.0.0").set("playground", "true").build().playground()).isTrue();
        assertThat(config("playground", "false").playground()).isFalse();
        assertThatThrownBy(() -> config("playground", "yes")).isInstanceOf(GatewayConfig.ConfigException.class)
                .hasMessage("option --playground is 'yes' but must be one of auto, true, false");
    }

    @Test
    void startUpSaysWhetherThePlaygroundIsOnAndWhy() {
        assertThat(PlaygroundFiles.startupLine(GatewayConfig.defaults(), 8000)).isEqualTo("playground on at "
                + "http://127.0.0.1:8000/ (--host 127.0.0.1 is a loopback address; --playground false turns it off)");
        assertThat(PlaygroundFiles.startupLine(config("host", "0.0.0.0"), 8000)).isEqualTo("playground off "
                + "(--host 0.0.0.0 is not a loopback address; --playground true serves it at /)");
        assertThat(PlaygroundFiles.startupLine(config("playground", "false"), 8000))
                .isEqualTo("playground off (--playground false; --playground true serves it at /)");
    }

    private static GatewayConfig config(String option, String value) {
        return GatewayConfig.builder().set(option, value).build();
    }
}
