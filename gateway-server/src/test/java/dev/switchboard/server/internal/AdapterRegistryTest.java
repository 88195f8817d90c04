package dev.switchboard.server.internal;

import dev.switchboard.adapter.hai.HaiAdapterProvider;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.WireAdapter;
import dev.switchboard.core.spi.WireAdapterProvider;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AdapterRegistryTest {
    /** A second provider claiming the HAI id. */
    public static final class Impostor implements WireAdapterProvider {
        @Override
        public String id() {
            return "hai";
        }

        @Override
        public WireAdapter create(AdapterContext context) {
            return new HaiAdapterProvider().create(context);
        }
    }

    @Test
    void serviceLoaderFindsTheHaiDialectOnItsPaths() {
        AdapterRegistry r = new AdapterRegistry(dev.switchboard.server.Plugins.builtIn().providers(
                dev.switchboard.core.spi.WireAdapterProvider.class), AdapterContext.defaults());
        assertThat(r.all()).containsKey("hai");
        assertThat(r.forPath("/ws")).extracting(WireAdapter::id).contains("hai");
        assertThat(r.forPath("/hai/ws")).extracting(WireAdapter::id).containsExactly("hai");
        assertThat(r.bySubprotocol("/ws", "hai")).isPresent();
        assertThat(r.probe("/ws", "{\"type\":\"user_message\"}").id()).isEqualTo("hai");
    }

    @Test
    void duplicateIdsFailNamingBothClasses() {
        assertThatThrownBy(() -> new AdapterRegistry(List.of(new HaiAdapterProvider(), new Impostor()),
                AdapterContext.defaults()))
                .hasMessageContaining(HaiAdapterProvider.class.getName())
                .hasMessageContaining(Impostor.class.getName());
    }
}
