package dev.switchboard.adapter.agentscope;

import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.WireAdapter;
import dev.switchboard.core.spi.WireAdapterProvider;

/** Registers the AgentScope Agent API dialect with the gateway under the id {@code agentscope}. */
public final class AgentScopeAdapterProvider implements WireAdapterProvider {

    @Override
    public String id() {
        return AgentScopeAdapter.ID;
    }

    @Override
    public WireAdapter create(AdapterContext context) {
        return new AgentScopeAdapter(context);
    }
}
