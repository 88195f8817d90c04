package dev.switchboard.store.sqlite;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import dev.switchboard.core.spi.StoredRows;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Reads a store's files with plain JDBC, beside the store, as the tests of its schema do. */
final class SqliteFiles {
    /** The tables and indexes of a version 1 file, as that version created them. */
    static final List<String> VERSION_ONE = List.of(
            "CREATE TABLE conversations (id TEXT PRIMARY KEY, owner TEXT, created_at INTEGER NOT NULL)",
            """
            CREATE TABLE messages (
                position INTEGER PRIMARY KEY AUTOINCREMENT,
                conversation_id TEXT NOT NULL REFERENCES conversations (id),
                id TEXT NOT NULL, run_id TEXT, role TEXT NOT NULL, content TEXT NOT NULL, tool_calls TEXT,
                tool_call_id TEXT, name TEXT, created_at INTEGER NOT NULL)""",
            "CREATE INDEX messages_by_conversation ON messages (conversation_id, position)",
            """
            CREATE TABLE events (
                conversation_id TEXT NOT NULL REFERENCES conversations (id),
                seq INTEGER NOT NULL, run_id TEXT, ts INTEGER NOT NULL, kind TEXT NOT NULL, payload TEXT NOT NULL,
                PRIMARY KEY (conversation_id, seq)) WITHOUT ROWID""",
            """
            CREATE TABLE approvals (
                id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL REFERENCES conversations (id), run_id TEXT,
                seq INTEGER NOT NULL, request TEXT NOT NULL, status TEXT NOT NULL, feedback TEXT, decided_by TEXT,
                decided_at INTEGER)""",
            "CREATE INDEX approvals_by_status ON approvals (conversation_id, status, seq)");

    /** The tables and indexes of a version 2 file: version 1's, the documents, and two more indexes. */
    static final List<String> VERSION_TWO = concat(VERSION_ONE,
            """
            CREATE TABLE documents (
                collection TEXT NOT NULL, id TEXT NOT NULL, position INTEGER NOT NULL, body TEXT NOT NULL,
                PRIMARY KEY (collection, id)) WITHOUT ROWID""",
            "CREATE INDEX documents_in_order ON documents (collection, position)",
            "CREATE INDEX approvals_pending ON approvals (status)",
            "CREATE INDEX events_by_kind ON events (kind, conversation_id, run_id)");

    /** The tables and indexes of a version 3 file: version 2's, with the run-bounds index for events_by_kind. */
    static final List<String> VERSION_THREE = concat(VERSION_TWO.subList(0, VERSION_TWO.size() - 1),
            "CREATE INDEX run_bounds ON events (kind, conversation_id, run_id) WHERE " + StoredRows.RUN_BOUNDS);

    /**
     * The tables and indexes of a version 7 file (as of version 6: 7 changed only a segment's payload):
     * version 3's, with {@code events} a rowid table of segments and an index of messages by id.
     */
    static final List<String> VERSION_SEVEN = concat(VERSION_THREE.stream()
                    .filter(ddl -> !ddl.contains("CREATE TABLE events") && !ddl.contains("ON events")).toList(),
            """
            CREATE TABLE events (
                conversation_id TEXT NOT NULL REFERENCES conversations (id),
                seq INTEGER NOT NULL, run_id TEXT, ts INTEGER NOT NULL, kind TEXT NOT NULL, payload TEXT NOT NULL,
                last_seq INTEGER)""",
            "CREATE UNIQUE INDEX events_by_seq ON events (conversation_id, seq)",
            "CREATE INDEX run_bounds ON events (kind, conversation_id, run_id) WHERE " + StoredRows.RUN_BOUNDS,
            "CREATE INDEX messages_by_id ON messages (conversation_id, id)");

    private SqliteFiles() {
    }

    private static List<String> concat(List<String> first, String... more) {
        return Stream.concat(first.stream(), Stream.of(more)).toList();
    }

    /**
     * Makes {@code file} a WAL database of the schema {@code ddl} at {@code version}, with the rows
     * {@code inserts} adds, as a build of that version left it.
     */
    static void create(Path file, List<String> ddl, int version, String... inserts) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement s = c.createStatement()) {
            s.execute("PRAGMA journal_mode = WAL");
            for (String sql : ddl) {
                s.execute(sql);
            }
            for (String sql : inserts) {
                s.execute(sql);
            }
            s.execute("PRAGMA user_version = " + version);
        }
    }

    /** The rows' values of the first column. */
    static List<String> query(Path file, String sql) throws SQLException {
        return query(file, sql, null);
    }

    /** The rows' values of one column: the first, or the one named. */
    static List<String> query(Path file, String sql, String column) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            List<String> rows = new ArrayList<>();
            while (rs.next()) {
                rows.add(column == null ? rs.getString(1) : rs.getString(column));
            }
            return rows;
        }
    }
}
