package dev.switchboard.core.spi;

import java.nio.file.Path;

/**
 * Entry point of a store module, found with {@link java.util.ServiceLoader}; its {@link #id()} is the
 * {@code --store} value that selects it. Without {@code --store}, the host opens the one store that
 * says it is {@link #configured}, else the default ({@code sqlite}).
 */
public interface ConversationStoreProvider extends Plugin {
    /**
     * Whether this store's own options are set, so that it is the store meant when {@code --store}
     * is not given (for example a database URL); false by default.
     */
    default boolean configured(Settings settings) {
        return false;
    }

    /**
     * Whether the stores this provider opens may be shared by several gateways at once (see
     * {@link ConversationStore#shared()}); a cluster needs such a store. False by default.
     */
    default boolean shared() {
        return false;
    }

    /**
     * Opens the store, recovering what a crash left. {@code dataDir} is the gateway's data
     * directory (the host has created and locked it). An {@link IllegalArgumentException} is a
     * configuration mistake; an {@link IllegalStateException} or {@link java.io.UncheckedIOException}
     * says in one line why the store cannot be opened.
     */
    ConversationStore open(Settings settings, Path dataDir);
}
