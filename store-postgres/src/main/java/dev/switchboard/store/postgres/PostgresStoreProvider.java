package dev.switchboard.store.postgres;

import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.ConversationStoreProvider;
import dev.switchboard.core.spi.OptionSpec;
import dev.switchboard.core.spi.Settings;

import java.nio.file.Path;
import java.util.List;

/**
 * Provides the {@code postgres} store: the database {@code --store-url} names, which selects this
 * store when {@code --store} is not given.
 */
public final class PostgresStoreProvider implements ConversationStoreProvider {
    /** Where the database is; the password in it is never logged. */
    static final OptionSpec URL = OptionSpec.text("store-url", "",
            "PostgreSQL database of the postgres store: " + PostgresUrl.FORMS + "; selects that store")
            .checkedBy(PostgresUrl::problem);

    /** The pool's connections, which the writer's batches, the seq reservations and the reads share. */
    static final OptionSpec POOL_SIZE = OptionSpec.integer("store-pool-size", 8, 1, 200,
            "connections of the postgres store to its database");

    @Override
    public String id() {
        return "postgres";
    }

    @Override
    public List<OptionSpec> options() {
        return List.of(URL, POOL_SIZE);
    }

    @Override
    public boolean shared() {
        return true;
    }

    @Override
    public boolean configured(Settings settings) {
        return settings.get(URL.name()).isPresent();
    }

    @Override
    public ConversationStore open(Settings settings, Path dataDir) {
        String url = settings.get(URL.name()).orElseThrow(() -> new IllegalArgumentException(
                "option --store-url is required: the PostgreSQL database, " + PostgresUrl.FORMS));
        PostgresUrl parsed;
        try {
            parsed = PostgresUrl.parse(url);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("option --store-url " + e.getMessage(), e);
        }
        return PostgresConversationStore.open(parsed, settings.integer(POOL_SIZE.name(), 8));
    }
}
