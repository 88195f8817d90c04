package dev.switchboard.store.sqlite;

import dev.switchboard.core.Event;
import dev.switchboard.core.spi.ConversationRecord;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.StoreBatch;
import dev.switchboard.testkit.ConversationStoreContract;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The store contract on a SQLite file; what is SQLite's own is in {@link SqliteConversationStoreOpenTest}. */
class SqliteConversationStoreTest extends ConversationStoreContract {
    @TempDir
    Path dir;

    @Override
    protected ConversationStore openFresh() {
        return SqliteConversationStore.open(dir);
    }

    @Override
    protected ConversationStore reopen() {
        return SqliteConversationStore.open(dir);
    }

    @Override
    protected boolean tellsNewConversations() {
        return true;
    }

    @Override
    protected Set<Event.Kind> kindsNotPrepared() {
        return EnumSet.of(Event.Kind.TEXT_DELTA, Event.Kind.REASONING_DELTA, Event.Kind.TOOL_CALL_ARGS);
    }

    @Test
    void aConversationReservedAgainAndAgainIsNotedOnceInTheFilterOfStoredIds() {
        SqliteConversationStore sqlite = (SqliteConversationStore) store;
        sqlite.write(new StoreBatch().addConversation(new ConversationRecord("again", "alice", T0)));
        for (int i = 1; i <= 5_000; i++) {
            // A conversation's reservations, and its releases at each stop.
            sqlite.write(new StoreBatch().reserve("again", i * 65_536L));
        }
        assertThat(sqlite.idsNoted()).isEqualTo(1);
        assertThat(sqlite.surelyAbsent("again")).isFalse();
    }
}
