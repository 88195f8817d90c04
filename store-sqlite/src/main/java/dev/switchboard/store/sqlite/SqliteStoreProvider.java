package dev.switchboard.store.sqlite;

import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.ConversationStoreProvider;
import dev.switchboard.core.spi.Settings;

import java.nio.file.Path;

/**
 * Provides the {@code sqlite} store ({@code --store sqlite}, the default): the files
 * {@value SqliteConversationStore#FILE_NAME} and {@value SqliteConversationStore#SEQS_FILE_NAME} in
 * the data directory.
 */
public final class SqliteStoreProvider implements ConversationStoreProvider {
    @Override
    public String id() {
        return "sqlite";
    }

    @Override
    public ConversationStore open(Settings settings, Path dataDir) {
        return SqliteConversationStore.open(dataDir);
    }
}
