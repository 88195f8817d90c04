package dev.switchboard.adapter.voiceassist;

import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.WireAdapter;
import dev.switchboard.core.spi.WireAdapterProvider;

/** Registers the VoiceAssist dialect with the gateway under the id {@code voiceassist}. */
public final class VoiceAssistAdapterProvider implements WireAdapterProvider {

    @Override
    public String id() {
        return VoiceAssistAdapter.ID;
    }

    @Override
    public WireAdapter create(AdapterContext context) {
        return new VoiceAssistAdapter(context);
    }
}
