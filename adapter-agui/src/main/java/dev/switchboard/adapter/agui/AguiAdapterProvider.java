package dev.switchboard.adapter.agui;

import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.WireAdapter;
import dev.switchboard.core.spi.WireAdapterProvider;

/** Registers the AG-UI dialect with the gateway under the id {@code agui}. */
public final class AguiAdapterProvider implements WireAdapterProvider {

    @Override
    public String id() {
        return AguiAdapter.ID;
    }

    @Override
    public WireAdapter create(AdapterContext context) {
        return new AguiAdapter(context);
    }
}
