package dev.switchboard.server;

import dev.switchboard.core.InMemoryConversationStore;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.ConversationStoreProvider;
import dev.switchboard.core.spi.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class GatewayConfigTest {
    @TempDir
    Path dir;

    @Test
    void defaultsAreThoseTheReadmeGives() {
        GatewayConfig c = GatewayConfig.parse(new String[0], Map.of());
        assertThat(c.port()).isEqualTo(8000);
        assertThat(c.host()).isEqualTo("127.0.0.1");
        assertThat(c.dataDir()).isEqualTo(Path.of("./data"));
        assertThat(c.runtime()).isEqualTo("demo");
        assertThat(c.settings().integer("demo-delay-ms", -1)).isEqualTo(30);
        assertThat(c.maxFrameBytes()).isEqualTo(65536);
        assertThat(c.moderation()).isTrue();
    }

    @Test
    void flagsBeatEnvironmentWhichBeatsTheFileWhichBeatsDefaults() throws Exception {
        Path file = dir.resolve("sb.json");
        Files.writeString(file, "{\"port\": 9001, \"host\": \"0.0.0.0\", \"demo-delay-ms\": 5, \"moderation\": false}");
        GatewayConfig c = GatewayConfig.parse(new String[] {"--config", file.toString(), "--port=9003"},
                Map.of("SWITCHBOARD_PORT", "9002", "SWITCHBOARD_DEMO_DELAY_MS", "7"));
        assertThat(c.port()).isEqualTo(9003);
        assertThat(c.settings().integer("demo-delay-ms", -1)).isEqualTo(7);
        assertThat(c.host()).isEqualTo("0.0.0.0");
        assertThat(c.moderation()).isFalse();
    }

    @Test
    void configFileMayComeFromTheEnvironment() throws Exception {
        Path file = dir.resolve("sb.json");
        Files.writeString(file, "{\"max-frame-bytes\": 2048}");
        GatewayConfig c = GatewayConfig.parse(new String[0], Map.of("SWITCHBOARD_CONFIG", file.toString()));
        assertThat(c.maxFrameBytes()).isEqualTo(2048);
    }

    @Test
    void theLogFormatIsTextUnlessJsonIsAskedForAndIsReadBeforeThePluginsWithTheirOptionsSkipped() throws Exception {
        assertThat(GatewayConfig.defaults().logFormat()).isEqualTo("text");
        Path file = dir.resolve("sb.json");
        Files.writeString(file, "{\"log-format\": \"json\", \"demo-delay-ms\": 5}");
        GatewayConfig fromFile = GatewayConfig.hostOptions(new String[] {"--config", file.toString(),
                "--openai-api-key", "sk-x", "--log-level", "debug"}, Map.of());
        assertThat(fromFile.logFormat()).isEqualTo("json");
        assertThat(fromFile.logLevel()).isEqualTo("debug");
        assertThat(GatewayConfig.hostOptions(new String[0], Map.of("SWITCHBOARD_LOG_FORMAT", "JSON")).logFormat())
                .isEqualTo("json");
        assertThat(GatewayConfig.hostOptions(new String[] {"--log-format", "text"},
                Map.of("SWITCHBOARD_LOG_FORMAT", "json")).logFormat()).isEqualTo("text");
        assertThatThrownBy(() -> GatewayConfig.hostOptions(new String[] {"--log-format", "xml"}, Map.of()))
                .hasMessageContaining("--log-format").hasMessageContaining("text").hasMessageContaining("json");
    }

    @Test
    void unknownFlagsAndBadValuesNameTheOptionAndWhatItAccepts() throws Exception {
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"--prot", "1"}, Map.of()))
                .hasMessageContaining("--prot");
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"--port", "http"}, Map.of()))
                .hasMessageContaining("--port").hasMessageContaining("an integer from 0 to 65535");
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"--port", "70000"}, Map.of()))
                .hasMessageContaining("70000");
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"--moderation", "maybe"}, Map.of()))
                .hasMessageContaining("true or false");
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"--port"}, Map.of()))
                .hasMessageContaining("needs a value");
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"8000"}, Map.of()))
                .hasMessageContaining("unexpected argument");
        assertThatThrownBy(() -> GatewayConfig.parse(new String[0], Map.of("SWITCHBOARD_DEMO_DELAY_MS", "-1")))
                .hasMessageContaining("SWITCHBOARD_DEMO_DELAY_MS");
        Path file = dir.resolve("bad.json");
        Files.writeString(file, "{\"colour\": \"red\"}");
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"--config", file.toString()}, Map.of()))
                .hasMessageContaining("colour").hasMessageContaining(file.toString());
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"--config", dir.resolve("none.json").toString()}, Map.of()))
                .hasMessage("cannot read config file " + dir.resolve("none.json") + ": it does not exist");
    }

    @Test
    void anUnknownRuntimeStopsStartUpNamingTheKnownOnes() {
        GatewayConfig c = GatewayConfig.builder().set(GatewayConfig.Option.RUNTIME, "gpt")
                .set(GatewayConfig.Option.DATA_DIR, dir.toString()).build();
        assertThatThrownBy(() -> GatewayServer.builder(c).build())
                .isInstanceOf(GatewayConfig.ConfigException.class)
                .hasMessageContaining("--runtime").hasMessageContaining("demo");
    }

    @Test
    void repeatableOptionsCollectEveryValueFromFlagsEnvironmentOrFile() throws Exception {
        GatewayConfig flags = GatewayConfig.parse(new String[] {"--a2h-api-key", "k1", "--a2h-api-key=k2"}, Map.of());
        assertThat(flags.getAll("a2h-api-key")).containsExactly("k1", "k2");
        GatewayConfig env = GatewayConfig.parse(new String[0], Map.of("SWITCHBOARD_A2H_API_KEYS", "k1,k2,k3"));
        assertThat(env.getAll("a2h-api-key")).containsExactly("k1", "k2", "k3");
        Path file = dir.resolve("sb.json");
        Files.writeString(file, "{\"agui-upstream-header\": [\"Authorization: Bearer x, y\", \"X-Team: a\"],"
                + " \"tools\": [{\"name\": \"lookup\"}]}");
        GatewayConfig fromFile = GatewayConfig.parse(new String[] {"--config", file.toString()}, Map.of());
        assertThat(fromFile.getAll("agui-upstream-header"))
                .containsExactly("Authorization: Bearer x, y", "X-Team: a");
        assertThat(fromFile.get("tools")).hasValue("[{\"name\":\"lookup\"}]");
        assertThat(GatewayConfig.defaults().getAll("a2h-api-key")).isEmpty();
    }

    @Test
    void jsonOptionsMustBeJsonAndTheOpenAiKeyVariableIsRead() {
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"--tools", "{oops"}, Map.of()))
                .hasMessageContaining("--tools").hasMessageContaining("JSON");
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"--tools", "42"}, Map.of()))
                .hasMessageContaining("a JSON array or object");
        assertThat(GatewayConfig.parse(new String[0], Map.of("OPENAI_API_KEY", "sk-1")).get("openai-api-key"))
                .hasValue("sk-1");
        assertThat(GatewayConfig.parse(new String[0], Map.of("OPENAI_API_KEY", "sk-1",
                "SWITCHBOARD_OPENAI_API_KEY", "sk-2")).get("openai-api-key")).hasValue("sk-2");
    }

    @Test
    void helpListsEveryOptionUnderItsPlugin() {
        Plugins plugins = Plugins.builtIn();
        String help = GatewayConfig.help(plugins);
        for (GatewayConfig.Option o : GatewayConfig.Option.values()) {
            assertThat(help).contains("--" + o.key());
        }
        for (var option : plugins.options()) {
            assertThat(help).contains("--" + option.name());
        }
        // Each plugin's options stand under its heading: the demo runtime's delay, JWT's secret, A2H's key.
        assertThat(help.indexOf("--demo-delay-ms")).isGreaterThan(help.indexOf("Runtime demo options:"));
        assertThat(help.indexOf("--jwt-secret")).isGreaterThan(help.indexOf("Authentication jwt options:"));
        assertThat(help.indexOf("--a2h-api-key")).isGreaterThan(help.indexOf("REST service a2h options:"));
        assertThat(help.indexOf("Runtime demo options:")).isGreaterThan(help.indexOf("Gateway options:"));
        // Descriptions wrap, so words are compared with the lines joined.
        assertThat(help.replaceAll("\\s+", " ")).contains("one of demo, openai, agui (")
                .contains("also read from SWITCHBOARD_A2H_API_KEYS")
                .contains("also read from OPENAI_API_KEY");
        assertThat(plugins.ids(Plugins.Kind.RUNTIME)).contains("demo", "openai", "agui");
    }

    @Test
    void theA2hKeyIsReadFromTheVariableItsOptionNamesAndFromThePluralOne() {
        assertThat(GatewayConfig.parse(new String[0], Map.of("SWITCHBOARD_A2H_API_KEY", "k1,k2"))
                .getAll("a2h-api-key")).containsExactly("k1", "k2");
        GatewayConfig both = GatewayConfig.parse(new String[0], Map.of("SWITCHBOARD_A2H_API_KEY", "k1",
                "SWITCHBOARD_A2H_API_KEYS", "k2"));
        assertThat(both.getAll("a2h-api-key")).containsExactly("k1", "k2");
        assertThat(both.warnings()).isEmpty();
    }

    @Test
    void environmentVariablesNamingNoOptionAreWarnedAboutWithTheNearestName() {
        GatewayConfig c = GatewayConfig.parse(new String[0], Map.of("SWITCHBOARD_PORTT", "1",
                "SWITCHBOARD_COLOUR", "red", "SWITCHBOARD_LOG_LEVEL", "debug", "PATH", "/bin"));
        assertThat(c.warnings()).containsExactly(
                "environment variable SWITCHBOARD_COLOUR names no option and is ignored",
                "environment variable SWITCHBOARD_PORTT names no option and is ignored (did you mean SWITCHBOARD_PORT?)");
        assertThat(c.logLevel()).isEqualTo("debug");
        assertThat(c.isGiven(GatewayConfig.Option.LOG_LEVEL)).isTrue();
        assertThat(GatewayConfig.defaults().isGiven(GatewayConfig.Option.LOG_LEVEL)).isFalse();
    }

    @Test
    void aMalformedConfigFileIsReportedWithItsLineAndColumn() throws Exception {
        Path file = dir.resolve("sb.json");
        Files.writeString(file, "{\n  \"port\": 8000,\n  \"host\" \"0.0.0.0\"\n}\n");
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"--config", file.toString()}, Map.of()))
                .hasMessageStartingWith("config file " + file + " is not valid JSON at line 3, column 10: ")
                .hasMessageNotContaining("\n");
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"--config", dir.toString()}, Map.of()))
                .hasMessage("cannot read config file " + dir + ": it is a directory");
    }

    @Test
    void theStoreIsTheOneNamedElseTheOneWhoseOptionsAreSetElseSqlite() {
        String url = "postgresql://app:pw@db.internal:5432/history";
        assertThat(GatewayServer.storeFor(GatewayConfig.parse(new String[0], Map.of())).id()).isEqualTo("sqlite");
        assertThat(GatewayServer.storeFor(GatewayConfig.parse(new String[] {"--store-url", url}, Map.of())).id())
                .isEqualTo("postgres");
        assertThat(GatewayServer.storeFor(GatewayConfig.parse(new String[0], Map.of("SWITCHBOARD_STORE_URL", url)))
                .id()).isEqualTo("postgres");
        assertThat(GatewayServer.storeFor(GatewayConfig.parse(new String[] {"--store-url", url, "--store", "sqlite"},
                Map.of())).id()).as("--store decides").isEqualTo("sqlite");
        assertThatThrownBy(() -> GatewayServer.storeFor(GatewayConfig.parse(new String[] {"--store", "mongo"},
                Map.of()))).isInstanceOf(GatewayConfig.ConfigException.class)
                .hasMessageStartingWith("option --store is 'mongo' but must be one of [")
                .hasMessageContaining("sqlite").hasMessageContaining("postgres");
    }

    @Test
    void twoStoresWhoseOptionsAreSetAreAMistakeNamingThemUnlessStoreChooses() {
        ConversationStoreProvider other = new ConversationStoreProvider() {
            @Override
            public String id() {
                return "other";
            }

            @Override
            public boolean configured(Settings settings) {
                return true;
            }

            @Override
            public ConversationStore open(Settings settings, Path dataDir) {
                return new InMemoryConversationStore();
            }
        };
        Plugins plugins = Plugins.builtInAnd(List.of(new Plugins.Found(Plugins.Kind.STORE, other, "other.jar")));
        assertThat(GatewayServer.storeFor(GatewayConfig.parse(new String[0], Map.of(), plugins)).id())
                .isEqualTo("other");
        GatewayConfig both = GatewayConfig.parse(new String[] {"--store-url", "postgresql://db/h"}, Map.of(), plugins);
        assertThatThrownBy(() -> GatewayServer.storeFor(both)).isInstanceOf(GatewayConfig.ConfigException.class)
                .hasMessage("the options of several stores are set ([postgres, other]); choose one with --store");
        assertThat(GatewayServer.storeFor(GatewayConfig.parse(new String[] {"--store-url", "postgresql://db/h",
                "--store", "other"}, Map.of(), plugins)).id()).isEqualTo("other");
    }

    @Test
    void aStoreUrlThatIsNotPostgresqlsIsAMistakeThatGivesTheFormsButNotThePassword() {
        assertThatThrownBy(() -> GatewayConfig.parse(new String[] {"--store-url", "mysql://app:hunter22@db/h"},
                Map.of())).isInstanceOf(GatewayConfig.ConfigException.class)
                .hasMessageStartingWith("option --store-url is not a PostgreSQL URL; it must be postgresql://")
                .hasMessageNotContaining("hunter22");
    }
}
