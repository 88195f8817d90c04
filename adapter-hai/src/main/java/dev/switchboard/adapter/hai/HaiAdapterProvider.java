package dev.switchboard.adapter.hai;

import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.WireAdapter;
import dev.switchboard.core.spi.WireAdapterProvider;

/** Registers the HAI dialect with the gateway under the id {@code hai}. */
public final class HaiAdapterProvider implements WireAdapterProvider {

    @Override
    public String id() {
        return HaiAdapter.ID;
    }

    @Override
    public WireAdapter create(AdapterContext context) {
        return new HaiAdapter(context);
    }
}
