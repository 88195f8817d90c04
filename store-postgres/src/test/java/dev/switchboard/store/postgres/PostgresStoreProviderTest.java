package dev.switchboard.store.postgres;

import dev.switchboard.core.spi.ConversationStoreProvider;
import dev.switchboard.core.spi.OptionSpec;
import dev.switchboard.core.spi.Settings;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PostgresStoreProviderTest {
    private static Settings settings(Map<String, String> values) {
        return key -> Optional.ofNullable(values.get(key));
    }

    @Test
    void theProviderIsFoundByItsIdAndDeclaresItsOptions() {
        ConversationStoreProvider provider = ServiceLoader.load(ConversationStoreProvider.class).stream()
                .map(ServiceLoader.Provider::get).filter(p -> p.id().equals("postgres")).findFirst().orElseThrow();

        assertThat(provider).isInstanceOf(PostgresStoreProvider.class);
        assertThat(provider.options()).extracting(OptionSpec::name).containsExactly("store-url", "store-pool-size");
        OptionSpec pool = provider.options().get(1);
        assertThat(pool.defaultValue()).isEqualTo("8");
        assertThat(pool.problem("0")).isNotNull();
        assertThat(pool.problem("200")).isNull();
        assertThat(pool.problem("201")).isNotNull();
        assertThat(provider.options().get(0).problem("mysql://db/h")).contains(PostgresUrl.FORMS);
    }

    @Test
    void itIsTheStoreMeantOnlyWhenItsUrlIsSet() {
        PostgresStoreProvider provider = new PostgresStoreProvider();

        assertThat(provider.configured(settings(Map.of("store-url", "postgresql://db/h")))).isTrue();
        assertThat(provider.configured(settings(Map.of("store-pool-size", "4")))).isFalse();
        assertThatThrownBy(() -> provider.open(settings(Map.of()), Path.of(".")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--store-url");
    }
}
