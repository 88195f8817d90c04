package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Plugins dropped into {@code --plugin-dir}: the example dialect (examples/adapter-jsonl, built by
 * the test kit's build as a project of its own) serves real connections with the option it declares, and a
 * bad jar stops start-up with a message naming the jar and what is wrong with it.
 */
class PluginDirTest {
    @TempDir
    Path dir;

    /** The example plugin's jar, as its own build made it. */
    private static Path exampleJar() {
        Path jar = Path.of(System.getProperty("switchboard.examples", "../testkit/target/examples"),
                "adapter-jsonl", "target", "adapter-jsonl.jar");
        assertThat(jar).as("the example plugin's jar; the test kit's build makes it (maven-invoker-plugin)").isRegularFile();
        return jar;
    }

    private Path plugins(Path... jars) throws IOException {
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        for (Path jar : jars) {
            Files.copy(jar, plugins.resolve(jar.getFileName()));
        }
        return plugins;
    }

    private GatewayServer start(Path plugins, String... more) {
        List<String> args = new java.util.ArrayList<>(List.of("--plugin-dir", plugins.toString(), "--port", "0",
                "--data-dir", dir.resolve("data").toString(), "--demo-delay-ms", "0"));
        args.addAll(List.of(more));
        GatewayServer server = GatewayServer.builder(GatewayConfig.parse(args.toArray(String[]::new), Map.of())).build();
        server.start().join();
        return server;
    }

    @Test
    void theExampleDialectFromThePluginDirectoryServesARunOnThePathItsOptionNames() throws Exception {
        GatewayServer server = start(plugins(exampleJar()), "--jsonl-path", "/lines");
        try (WsClient c = WsClient.connect(server.port(), "/lines")) {
            List<JsonNode> run = c.send("{\"type\":\"message\",\"conversation\":\"pl-1\",\"text\":\"hello\"}")
                    .until(f -> f.path("type").asText().equals("run_finished"));
            assertThat(run.get(0).path("type").asText()).isEqualTo("run_started");
            assertThat(run).allSatisfy(f -> assertThat(f.path("conversation").asText()).isEqualTo("pl-1"));
            assertThat(run).anySatisfy(f -> assertThat(f.path("type").asText()).isEqualTo("text_delta"));
            // Every event carries its seq, one after another: the cursor a client resumes from.
            List<Long> seqs = run.stream().map(f -> f.path("seq").asLong()).toList();
            for (int i = 1; i < seqs.size(); i++) {
                assertThat(seqs.get(i)).isEqualTo(seqs.get(i - 1) + 1);
            }
            // Resuming from the middle of the run gets the rest of it, once, in order.
            long cursor = seqs.get(seqs.size() / 2);
            try (WsClient again = WsClient.connect(server.port(), "/lines")) {
                List<JsonNode> rest = again.send("{\"type\":\"join\",\"conversation\":\"pl-1\",\"after\":" + cursor + "}")
                        .until(f -> f.path("type").asText().equals("run_finished"));
                assertThat(rest.stream().map(f -> f.path("seq").asLong()).toList())
                        .isEqualTo(seqs.subList(seqs.size() / 2 + 1, seqs.size()));
            }
            // Bad input is answered in the dialect, and the connection stays usable.
            JsonNode error = c.send("{\"type\":\"message\",\"text\":\"hi\"}").next();
            assertThat(error.path("type").asText()).isEqualTo("error");
            assertThat(error.path("code").asText()).isEqualTo(dev.switchboard.core.ErrorCode.MISSING_FIELD.wireCode());
            assertThat(error.path("field").asText()).isEqualTo("conversation");
            assertThat(c.send("{\"type\":\"ping\"}").next().path("type").asText()).isEqualTo("pong");
        } finally {
            server.stop(Duration.ofSeconds(1)).join();
        }
        // The built-in dialects are served beside it.
        assertThat(GatewayConfig.parse(new String[] {"--plugin-dir", dir.resolve("plugins").toString()}, Map.of())
                .plugins().ids(Plugins.Kind.DIALECT)).contains("hai", "agui", "voiceassist", "agentscope", "jsonl");
    }

    @Test
    void thePluginsOptionIsCheckedListedInHelpAndUnknownWithoutTheJar() throws Exception {
        Path plugins = plugins(exampleJar());
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"--plugin-dir", plugins.toString(),
                "--jsonl-path", "lines"}, Map.of()))
                .isInstanceOf(GatewayConfig.ConfigException.class)
                .hasMessage("option --jsonl-path is 'lines' but must be a path starting with /");
        assertThat(GatewayConfig.parse(new String[] {"--plugin-dir", plugins.toString()},
                Map.of("SWITCHBOARD_JSONL_PATH", "/env")).get("jsonl-path")).hasValue("/env");
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"--jsonl-path", "/lines"}, Map.of()))
                .hasMessageContaining("unknown option --jsonl-path");
        ChildGateway.Exit help = ChildGateway.run(Map.of(), "--plugin-dir", plugins.toString(), "--help");
        assertThat(help.code()).isZero();
        assertThat(help.output()).contains("Dialect jsonl (" + plugins.resolve("adapter-jsonl.jar") + ") options:")
                .contains("--jsonl-path");
    }

    @Test
    void aJarWithNoProviderIsNamed() throws Exception {
        Path jar = jar("empty.jar", Map.of("README.txt", utf8("nothing here")));
        assertStartupFails(plugins(jar), "plugin jar " + dir.resolve("plugins/empty.jar")
                + " holds no Switchboard provider");
    }

    @Test
    void aFileThatIsNoJarIsNamed() throws Exception {
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        Files.writeString(plugins.resolve("notes.jar"), "not a zip");
        assertStartupFails(plugins, "plugin jar " + plugins.resolve("notes.jar") + " cannot be read as a jar");
    }

    @Test
    void aProviderClassThatDoesNotLoadIsNamed() throws Exception {
        Path jar = jar("broken.jar", Map.of("META-INF/services/dev.switchboard.core.spi.WireAdapterProvider",
                utf8("com.example.Missing\n")));
        assertStartupFails(plugins(jar), "plugin jar " + dir.resolve("plugins/broken.jar")
                + ": a dialect provider cannot be loaded");
    }

    @Test
    void aSecondDialectWithTheSameIdIsNamed() throws Exception {
        Path plugins = plugins(exampleJar());
        Files.copy(exampleJar(), plugins.resolve("zz-copy.jar"));
        assertStartupFails(plugins, "plugin jar " + plugins.resolve("zz-copy.jar")
                + ": the dialect id 'jsonl' is already provided by com.example.jsonl.JsonlAdapterProvider ("
                + plugins.resolve("adapter-jsonl.jar") + ")");
    }

    @Test
    void anOptionDeclaredUnlikeAnotherPluginsOrTheHostsIsNamed() throws Exception {
        Path clash = runtimeJar("clash.jar", "OptionSpec.integer(\"model\", 1, 0, 9, \"a number\")");
        assertStartupFails(plugins(clash), "plugin jar " + dir.resolve("plugins/clash.jar")
                + ": runtime odd (" + dir.resolve("plugins/clash.jar") + ") declares option --model"
                + " (an integer from 0 to 9, default '1') unlike runtime openai (text, default '')");
        Files.delete(dir.resolve("plugins/clash.jar"));
        Path host = runtimeJar("host.jar", "OptionSpec.text(\"port\", \"\", \"mine\")");
        assertStartupFails(plugins(host), "declares option --port, which is one of the gateway's own");
        // The same option declared alike is one option, read by both (as upstream-timeout-seconds is).
        Files.delete(dir.resolve("plugins/host.jar"));
        plugins(runtimeJar("alike.jar", "dev.switchboard.core.UpstreamHttp.TIMEOUT_OPTION"));
        GatewayConfig config = GatewayConfig.parse(new String[] {"--plugin-dir", dir.resolve("plugins").toString(),
                "--runtime", "odd", "--upstream-timeout-seconds", "7"}, Map.of());
        assertThat(config.plugins().ids(Plugins.Kind.RUNTIME)).contains("odd");
        assertThat(config.get("upstream-timeout-seconds")).hasValue("7");
    }

    private void assertStartupFails(Path plugins, String message) {
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"--plugin-dir", plugins.toString()}, Map.of()))
                .isInstanceOf(StartupException.class)
                .hasMessageContaining(message);
        // The command line says it in one line and exits 1.
        try {
            ChildGateway.Exit exit = ChildGateway.run(Map.of(), "--plugin-dir", plugins.toString(), "--port", "0",
                    "--data-dir", dir.resolve("data").toString());
            assertThat(exit.code()).isEqualTo(1);
            assertThat(exit.output()).contains("switchboard: ").contains(message);
        } catch (IOException | InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private Path jar(String name, Map<String, byte[]> entries) throws IOException {
        Path jar = dir.resolve(name);
        try (OutputStream out = Files.newOutputStream(jar); JarOutputStream zip = new JarOutputStream(out)) {
            for (Map.Entry<String, byte[]> e : entries.entrySet()) {
                zip.putNextEntry(new JarEntry(e.getKey()));
                zip.write(e.getValue());
                zip.closeEntry();
            }
        }
        return jar;
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** A jar holding a runtime {@code odd} that declares one option, compiled here. */
    private Path runtimeJar(String name, String option) throws IOException {
        Path src = Files.createDirectories(dir.resolve("src-" + name + "/odd"));
        Path classes = Files.createDirectories(dir.resolve("classes-" + name));
        Files.writeString(src.resolve("OddRuntimeProvider.java"), """
                package odd;

                import dev.switchboard.core.spi.AgentRuntime;
                import dev.switchboard.core.spi.AgentRuntimeProvider;
                import dev.switchboard.core.spi.OptionSpec;
                import dev.switchboard.core.spi.Settings;
                import java.util.List;

                public final class OddRuntimeProvider implements AgentRuntimeProvider {
                    public String id() { return "odd"; }
                    public List<OptionSpec> options() { return List.of(%s); }
                    public AgentRuntime create(Settings settings) { throw new IllegalArgumentException("never"); }
                }
                """.formatted(option));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int rc = javac.run(null, null, null, "-d", classes.toString(), "-cp", System.getProperty("java.class.path"),
                src.resolve("OddRuntimeProvider.java").toString());
        assertThat(rc).isZero();
        return jar(name, Map.of(
                "META-INF/services/dev.switchboard.core.spi.AgentRuntimeProvider", utf8("odd.OddRuntimeProvider\n"),
                "odd/OddRuntimeProvider.class", Files.readAllBytes(classes.resolve("odd/OddRuntimeProvider.class"))));
    }
}
