package dev.switchboard.store.postgres;

import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.testkit.ConversationStoreContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The store contract on PostgreSQL: one embedded server for the class, a new database for each
 * test; what is PostgreSQL's own is in {@link PostgresConversationStoreOpenTest}.
 */
class PostgresConversationStoreTest extends ConversationStoreContract {
    @RegisterExtension
    static final PostgresServer postgres = new PostgresServer();

    private String url;

    @Override
    protected ConversationStore openFresh() {
        url = postgres.newDatabase();
        return reopen();
    }

    @Override
    protected ConversationStore reopen() {
        return PostgresConversationStore.open(PostgresUrl.parse(url), 4);
    }
}
