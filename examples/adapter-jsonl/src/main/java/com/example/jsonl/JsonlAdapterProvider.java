package com.example.jsonl;

import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.OptionSpec;
import dev.switchboard.core.spi.WireAdapter;
import dev.switchboard.core.spi.WireAdapterProvider;

import java.util.List;

/**
 * The plugin's entry point, named in {@code META-INF/services/dev.switchboard.core.spi.WireAdapterProvider}.
 * It declares its one option, the WebSocket path it serves; the gateway lists it in {@code --help}
 * and reads it from {@code --jsonl-path}, {@code SWITCHBOARD_JSONL_PATH} or the config file.
 */
public final class JsonlAdapterProvider implements WireAdapterProvider {
    static final OptionSpec PATH = OptionSpec.text("jsonl-path", "/jsonl",
            "WebSocket path of the JSON Lines dialect").checkedBy(v -> v.startsWith("/") ? null
            : "is '" + v + "' but must be a path starting with /");

    @Override
    public String id() {
        return "jsonl";
    }

    @Override
    public List<OptionSpec> options() {
        return List.of(PATH);
    }

    @Override
    public WireAdapter create(AdapterContext context) {
        return new JsonlAdapter(context.settings().get(PATH.name()).orElse(PATH.defaultValue()),
                context.maxContentChars());
    }
}
