package dev.switchboard.runtime.agui;

import dev.switchboard.core.spi.Settings;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AguiUpstreamConfigTest {
    private final Map<String, String> options = new HashMap<>(Map.of("agui-upstream-url", "http://127.0.0.1:8000/agui"));

    private AguiUpstreamConfig config() {
        return AguiUpstreamConfig.from((Settings) k -> Optional.ofNullable(options.get(k)));
    }

    @Test
    void theUrlIsRequiredAndTheRestHasDefaults() {
        AguiUpstreamConfig c = config();

        assertThat(c.url()).hasToString("http://127.0.0.1:8000/agui");
        assertThat(c.headers()).isEmpty();
        assertThat(c.forwardToken()).isFalse();
        assertThat(c.timeout()).isEqualTo(Duration.ofSeconds(60));

        options.remove("agui-upstream-url");
        assertThatThrownBy(this::config).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("option --agui-upstream-url is required");
    }

    @Test
    void aUrlThatIsNotHttpIsRefusedWithTheValue() {
        options.put("agui-upstream-url", "localhost:8000");

        assertThatThrownBy(this::config).hasMessageStartingWith("option --agui-upstream-url is 'localhost:8000' but must be");
    }

    @Test
    void headersAreRepeatableNameValueLines() {
        options.put("agui-upstream-header", "Authorization: Bearer abc\nX-Tenant:  acme ");
        options.put("agui-forward-token", "true");

        AguiUpstreamConfig c = config();
        assertThat(c.headers()).containsExactly(new AguiUpstreamConfig.Header("Authorization", "Bearer abc"),
                new AguiUpstreamConfig.Header("X-Tenant", "acme"));
        assertThat(c.forwardToken()).isTrue();
        assertThat(c.toString()).doesNotContain("abc");
    }

    @Test
    void aHeaderWithoutANameIsRefusedWithoutShowingItsValue() {
        options.put("agui-upstream-header", "Bearer secret-value");

        assertThatThrownBy(this::config).hasMessageStartingWith("option --agui-upstream-header is 'Bearer secret-value'");
        options.put("agui-upstream-header", "Bad Name: secret-value");
        assertThatThrownBy(this::config).hasMessageStartingWith("option --agui-upstream-header is 'Bad Name: …'")
                .hasMessageNotContaining("secret-value");
    }

    @Test
    void aHeaderTheClientSetsItselfIsRefused() {
        options.put("agui-upstream-header", "Content-Length: 5");

        assertThatThrownBy(this::config).hasMessage(
                "option --agui-upstream-header cannot set Content-Length, which the gateway sets itself");
    }
}
