package dev.switchboard.store.sqlite;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.EventCodec;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ConversationRecord;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.StoreBatch;
import dev.switchboard.core.spi.StoredRows;
import org.sqlite.SQLiteConfig;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/** A {@link ConversationStore} in one SQLite file, {@code switchboard.db} in the data directory. */
public final class SqliteConversationStore implements ConversationStore {
    /** Name of the database file inside the data directory. */
    public static final String FILE_NAME = "switchboard.db";

    /** The schema this code creates and reads, kept in {@code PRAGMA user_version}. */
    public static final int SCHEMA_VERSION = 3;

    private static final List<String> SCHEMA = List.of(
            """
            CREATE TABLE conversations (
                id         TEXT PRIMARY KEY,
                owner      TEXT,
                created_at INTEGER NOT NULL
            )""",
            """
            CREATE TABLE messages (
                position        INTEGER PRIMARY KEY AUTOINCREMENT,
                conversation_id TEXT NOT NULL REFERENCES conversations (id),
                id              TEXT NOT NULL,
                run_id          TEXT,
                role            TEXT NOT NULL,
                content         TEXT NOT NULL,
                tool_calls      TEXT,
                tool_call_id    TEXT,
                name            TEXT,
                created_at      INTEGER NOT NULL
            )""",
            "CREATE INDEX messages_by_conversation ON messages (conversation_id, position)",
            """
            CREATE TABLE events (
                conversation_id TEXT NOT NULL REFERENCES conversations (id),
                seq             INTEGER NOT NULL,
                run_id          TEXT,
                ts              INTEGER NOT NULL,
                kind            TEXT NOT NULL,
                payload         TEXT NOT NULL,
                PRIMARY KEY (conversation_id, seq)
            ) WITHOUT ROWID""",
            """
            CREATE TABLE approvals (
                id              TEXT PRIMARY KEY,
                conversation_id TEXT NOT NULL REFERENCES conversations (id),
                run_id          TEXT,
                seq             INTEGER NOT NULL,
                request         TEXT NOT NULL,
                status          TEXT NOT NULL,
                feedback        TEXT,
                decided_by      TEXT,
                decided_at      INTEGER
            )""",
            "CREATE INDEX approvals_by_status ON approvals (conversation_id, status, seq)");

    /** Version 2: JSON documents of other modules (the A2H side), and pending approvals of every conversation. */
    private static final List<String> SCHEMA_V2 = List.of(
            """
            CREATE TABLE IF NOT EXISTS documents (
                collection TEXT NOT NULL,
                id         TEXT NOT NULL,
                position   INTEGER NOT NULL,
                body       TEXT NOT NULL,
                PRIMARY KEY (collection, id)
            ) WITHOUT ROWID""",
            "CREATE INDEX IF NOT EXISTS documents_in_order ON documents (collection, position)",
            "CREATE INDEX IF NOT EXISTS approvals_pending ON approvals (status)",
            "CREATE INDEX IF NOT EXISTS events_by_kind ON events (kind, conversation_id, run_id)");

    /**
     * Version 3: the index crash recovery reads holds only the events that start and end runs, so the
     * insert of every other event (most of them text deltas) no longer updates it.
     */
    private static final List<String> SCHEMA_V3 = List.of(
            "DROP INDEX IF EXISTS events_by_kind",
            "CREATE INDEX IF NOT EXISTS run_bounds ON events (kind, conversation_id, run_id) WHERE "
                    + StoredRows.RUN_BOUNDS);

    /**
     * The file of the seq reservations, beside the store: each conversation's highest seq that may
     * have been shown to a client before it was stored (events reach clients before their batch
     * commits). A file of its own, so a reservation, which a conversation's first event waits for,
     * commits under its own lock rather than behind the store writer's batch.
     */
    public static final String SEQS_FILE_NAME = "switchboard-seqs.db";

    /** The schema of the reservations file, kept in its {@code PRAGMA user_version}. */
    public static final int SEQS_SCHEMA_VERSION = 1;

    private static final String SEQS_SCHEMA = """
            CREATE TABLE IF NOT EXISTS seq_reservations (
                conversation_id TEXT PRIMARY KEY,
                reserved        INTEGER NOT NULL
            ) WITHOUT ROWID""";

    private final Path file;
    private final Connection writer;
    private final Connection reader;
    /** The reservations file's one connection, guarded by its monitor. */
    private final Connection seqs;
    private final PreparedStatement selectReservation;

    private final PreparedStatement insertConversation;
    private final PreparedStatement insertMessage;
    private final PreparedStatement insertEvent;
    private final PreparedStatement upsertApproval;
    private final PreparedStatement upsertReservation;
    // A batch's transaction, prepared once: the driver's setAutoCommit/commit pair runs two
    // transactions a batch and parses its SQL each time, which cost more than a small batch's rows.
    private final PreparedStatement begin;
    private final PreparedStatement commit;
    private final PreparedStatement rollback;

    private final PreparedStatement selectConversation;
    private final PreparedStatement selectLastSeq;
    private final PreparedStatement selectEvents;
    private final PreparedStatement selectMessages;
    private final PreparedStatement selectApproval;
    private final PreparedStatement selectPendingApprovals;
    private final PreparedStatement selectAllPendingApprovals;
    private final PreparedStatement countAllPendingApprovals;
    private final PreparedStatement selectUnfinishedRuns;
    private final PreparedStatement insertDocument;
    private final PreparedStatement replaceDocument;
    private final PreparedStatement selectDocument;
    private final PreparedStatement selectDocuments;

    private volatile boolean closed;
    /**
     * Held by every write, first come first served: the store writer commits batch after batch,
     * and a small write from another thread (a seq reservation, an A2H document) waits for one
     * batch at most rather than for as long as the writer keeps winning a monitor.
     */
    private final ReentrantLock writing = new ReentrantLock(true);

    private SqliteConversationStore(Path file, Connection writer, Connection reader, Connection seqs)
            throws SQLException {
        this.file = file;
        this.writer = writer;
        this.reader = reader;
        this.seqs = seqs;
        insertConversation = writer.prepareStatement(
                "INSERT OR IGNORE INTO conversations (id, owner, created_at) VALUES (?, ?, ?)");
        insertMessage = writer.prepareStatement("""
                INSERT INTO messages (conversation_id, id, run_id, role, content, tool_calls, tool_call_id, name,
                                      created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""");
        insertEvent = writer.prepareStatement(
                "INSERT INTO events (conversation_id, seq, run_id, ts, kind, payload) VALUES (?, ?, ?, ?, ?, ?)");
        upsertApproval = writer.prepareStatement("""
                INSERT OR REPLACE INTO approvals (id, conversation_id, run_id, seq, request, status, feedback,
                                                  decided_by, decided_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""");
        upsertReservation = seqs.prepareStatement(
                "INSERT OR REPLACE INTO seq_reservations (conversation_id, reserved) VALUES (?, ?)");
        selectReservation = seqs.prepareStatement("SELECT reserved FROM seq_reservations WHERE conversation_id = ?");
        begin = writer.prepareStatement("BEGIN IMMEDIATE");
        commit = writer.prepareStatement("COMMIT");
        rollback = writer.prepareStatement("ROLLBACK");

        selectConversation = reader.prepareStatement("SELECT owner, created_at FROM conversations WHERE id = ?");
        selectLastSeq = reader.prepareStatement("SELECT MAX(seq) FROM events WHERE conversation_id = ?");
        selectEvents = reader.prepareStatement("""
                SELECT seq, run_id, ts, payload FROM events
                WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?""");
        selectMessages = reader.prepareStatement("""
                SELECT id, role, content, tool_calls, tool_call_id, name FROM messages
                WHERE conversation_id = ? ORDER BY position""");
        selectApproval = reader.prepareStatement("""
                SELECT conversation_id, run_id, seq, request, status, feedback, decided_by, decided_at
                FROM approvals WHERE id = ?""");
        selectPendingApprovals = reader.prepareStatement("""
                SELECT conversation_id, run_id, seq, request, status, feedback, decided_by, decided_at
                FROM approvals WHERE conversation_id = ? AND status = 'PENDING' ORDER BY seq""");
        // A pending approval is inserted once and only replaced when decided, so its rowid is its age.
        selectAllPendingApprovals = reader.prepareStatement("""
                SELECT conversation_id, run_id, seq, request, status, feedback, decided_by, decided_at
                FROM approvals WHERE status = 'PENDING' ORDER BY rowid LIMIT ? OFFSET ?""");
        countAllPendingApprovals = reader.prepareStatement("SELECT COUNT(*) FROM approvals WHERE status = 'PENDING'");
        selectUnfinishedRuns = reader.prepareStatement(StoredRows.UNFINISHED_RUNS);
        insertDocument = writer.prepareStatement("""
                INSERT OR IGNORE INTO documents (collection, id, position, body)
                VALUES (?, ?, (SELECT COALESCE(MAX(position), 0) + 1 FROM documents WHERE collection = ?), ?)""");
        replaceDocument = writer.prepareStatement(
                "UPDATE documents SET body = ? WHERE collection = ? AND id = ?");
        selectDocument = reader.prepareStatement("SELECT body FROM documents WHERE collection = ? AND id = ?");
        selectDocuments = reader.prepareStatement(
                "SELECT body FROM documents WHERE collection = ? ORDER BY position");
    }

    /**
     * Opens the store in {@code dataDir}, creating the directory, the file and the schema when missing.
     *
     * @throws IllegalStateException naming the file when it cannot be opened, is not a SQLite
     *     database, or has a schema newer than {@link #SCHEMA_VERSION}
     */
    public static SqliteConversationStore open(Path dataDir) {
        try {
            Files.createDirectories(dataDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the data directory " + dataDir, e);
        }
        Path file = dataDir.resolve(FILE_NAME).toAbsolutePath();
        Path seqsFile = dataDir.resolve(SEQS_FILE_NAME).toAbsolutePath();
        Connection writer = null;
        Connection reader = null;
        Connection seqs = null;
        Path opening = file;
        try {
            writer = connect(file);
            migrate(file, writer);
            reader = connect(file);
            pragma(reader, "query_only = ON");
            opening = seqsFile;
            seqs = connect(seqsFile);
            migrateSeqs(seqsFile, seqs);
            return new SqliteConversationStore(file, writer, reader, seqs);
        } catch (SQLException e) {
            IllegalStateException failure = new IllegalStateException(
                    "cannot open the store " + opening + ": " + e.getMessage(), e);
            closeQuietly(seqs, failure);
            closeQuietly(reader, failure);
            closeQuietly(writer, failure);
            throw failure;
        } catch (RuntimeException e) {
            closeQuietly(seqs, e);
            closeQuietly(reader, e);
            closeQuietly(writer, e);
            throw e;
        }
    }

    // IMMEDIATE takes the write lock at BEGIN, so a transaction never fails half way for want of it.
    private static Connection connect(Path file) throws SQLException {
        SQLiteConfig config = new SQLiteConfig();
        config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE);
        Connection c = config.createConnection("jdbc:sqlite:" + file);
        try {
            pragma(c, "busy_timeout = 5000");
            pragma(c, "synchronous = NORMAL");
            pragma(c, "foreign_keys = ON");
            return c;
        } catch (SQLException e) {
            closeQuietly(c, e);
            throw e;
        }
    }

    private static void migrate(Path file, Connection c) throws SQLException {
        // Checked before anything writes to the file, so a newer file is left as it was.
        checkVersion(file, userVersion(c));
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("PRAGMA journal_mode = WAL")) {
            String mode = rs.next() ? rs.getString(1) : null;
            if (!"wal".equalsIgnoreCase(mode)) {
                throw new SQLException("journal_mode is " + mode + " instead of wal");
            }
        }
        c.setAutoCommit(false);
        try {
            int version = userVersion(c);
            checkVersion(file, version);
            try (Statement s = c.createStatement()) {
                if (version < 1) {
                    for (String ddl : SCHEMA) {
                        s.execute(ddl);
                    }
                }
                if (version < 2) {
                    for (String ddl : SCHEMA_V2) {
                        s.execute(ddl);
                    }
                }
                if (version < 3) {
                    for (String ddl : SCHEMA_V3) {
                        s.execute(ddl);
                    }
                }
                s.execute("PRAGMA user_version = " + SCHEMA_VERSION);
            }
            c.commit();
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(true);
        }
    }

    /** Creates the reservations file's table; refuses a file of a newer gateway. */
    private static void migrateSeqs(Path seqsFile, Connection c) throws SQLException {
        int version = userVersion(c);
        if (version > SEQS_SCHEMA_VERSION) {
            throw new IllegalStateException("the seq reservations " + seqsFile + " have schema version " + version
                    + ", newer than version " + SEQS_SCHEMA_VERSION + " that this gateway knows;"
                    + " open them with the newer gateway");
        }
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("PRAGMA journal_mode = WAL")) {
            String mode = rs.next() ? rs.getString(1) : null;
            if (!"wal".equalsIgnoreCase(mode)) {
                throw new SQLException("journal_mode is " + mode + " instead of wal");
            }
        }
        try (Statement s = c.createStatement()) {
            s.execute(SEQS_SCHEMA);
            s.execute("PRAGMA user_version = " + SEQS_SCHEMA_VERSION);
        }
    }

    private static int userVersion(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("PRAGMA user_version")) {
            return rs.next() ? rs.getInt(1) : 0;
        }
    }

    private static void checkVersion(Path file, int version) {
        if (version > SCHEMA_VERSION) {
            throw new IllegalStateException("the store " + file + " has schema version " + version
                    + ", newer than version " + SCHEMA_VERSION + " that this gateway knows;"
                    + " open it with the newer gateway");
        }
    }

    private static void pragma(Connection c, String assignment) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("PRAGMA " + assignment);
        }
    }

    private static void closeQuietly(Connection c, Exception failure) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }

    @Override
    public void write(StoreBatch batch) {
        requireOpen();
        if (!batch.reservations().isEmpty()) {
            reserve(batch.reservations());
        }
        if (!batch.hasRows()) {
            return;
        }
        writing.lock();
        try {
            requireOpen();
            begin.execute();
            try {
                stage(batch);
                commit.execute();
            } catch (SQLException | RuntimeException e) {
                abandon(e);
                throw e;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(batch.rollbackMessage(event -> stored(event, e), file.toString(),
                    e.getMessage()), e);
        } finally {
            writing.unlock();
        }
    }

    private void stage(StoreBatch batch) throws SQLException {
        for (ConversationRecord c : batch.conversations()) {
            insertConversation.setString(1, c.id());
            insertConversation.setString(2, c.owner());
            insertConversation.setLong(3, c.createdAt());
            insertConversation.addBatch();
        }
        if (!batch.conversations().isEmpty()) {
            insertConversation.executeBatch();
        }

        for (StoreBatch.MessageRow row : batch.messages()) {
            StoredRows.bindMessage(insertMessage, row);
            insertMessage.addBatch();
        }
        if (!batch.messages().isEmpty()) {
            insertMessage.executeBatch();
        }

        for (int i = 0; i < batch.events().size(); i++) {
            StoredRows.bindEvent(insertEvent, batch, i);
            insertEvent.addBatch();
        }
        if (!batch.events().isEmpty()) {
            insertEvent.executeBatch();
        }

        for (ApprovalRecord a : batch.approvals()) {
            StoredRows.bindApproval(upsertApproval, a);
            upsertApproval.addBatch();
        }
        if (!batch.approvals().isEmpty()) {
            upsertApproval.executeBatch();
        }
    }

    /** Stores reservations in their own file and transaction; durable when this returns. */
    private void reserve(List<StoreBatch.Reservation> reservations) {
        synchronized (seqs) {
            requireOpen();
            try {
                for (StoreBatch.Reservation r : reservations) {
                    upsertReservation.setString(1, r.conversationId());
                    upsertReservation.setLong(2, r.upTo());
                    upsertReservation.addBatch();
                }
                // All of them or none: a release at shutdown gives back many conversations' seqs at once.
                seqs.setAutoCommit(false);
                try {
                    upsertReservation.executeBatch();
                    seqs.commit();
                } catch (SQLException e) {
                    upsertReservation.clearBatch();
                    seqs.rollback();
                    throw e;
                } finally {
                    seqs.setAutoCommit(true);
                }
            } catch (SQLException e) {
                throw new IllegalStateException("cannot store seq reservations in " + file.resolveSibling(SEQS_FILE_NAME)
                        + ": " + e.getMessage(), e);
            }
        }
    }

    /** The event's stored JSON, encoded on the emitting thread rather than by the writer. */
    @Override
    public Object prepare(Envelope event) {
        return EventCodec.toJson(event.event());
    }

    /** Rolls back and drops rows still queued on any statement, so the next batch starts clean. */
    private void abandon(Exception cause) {
        for (PreparedStatement s : List.of(insertConversation, insertMessage, insertEvent, upsertApproval)) {
            try {
                s.clearBatch();
            } catch (SQLException e) {
                cause.addSuppressed(e);
            }
        }
        try {
            rollback.execute();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    /** After a rollback, whether the event's seq is stored; false when that cannot be read. */
    private boolean stored(Envelope event, SQLException cause) {
        try (PreparedStatement exists = writer.prepareStatement(
                "SELECT 1 FROM events WHERE conversation_id = ? AND seq = ?")) {
            exists.setString(1, event.conversationId());
            exists.setLong(2, event.seq());
            try (ResultSet rs = exists.executeQuery()) {
                return rs.next();
            }
        } catch (SQLException e) {
            cause.addSuppressed(e);
            return false;
        }
    }

    @Override
    public Optional<ConversationRecord> conversation(String conversationId) {
        synchronized (reader) {
            requireOpen();
            try {
                selectConversation.setString(1, conversationId);
                try (ResultSet rs = selectConversation.executeQuery()) {
                    return rs.next()
                            ? Optional.of(new ConversationRecord(conversationId, rs.getString(1), rs.getLong(2)))
                            : Optional.empty();
                }
            } catch (SQLException e) {
                throw readFailure("conversation " + conversationId, e);
            }
        }
    }

    @Override
    public long lastSeq(String conversationId) {
        long stored = lastEventSeq(conversationId);
        synchronized (seqs) {
            requireOpen();
            try {
                selectReservation.setString(1, conversationId);
                try (ResultSet rs = selectReservation.executeQuery()) {
                    return Math.max(stored, rs.next() ? rs.getLong(1) : 0);
                }
            } catch (SQLException e) {
                throw readFailure("the seq reservation of conversation " + conversationId, e);
            }
        }
    }

    @Override
    public long lastEventSeq(String conversationId) {
        synchronized (reader) {
            requireOpen();
            try {
                selectLastSeq.setString(1, conversationId);
                try (ResultSet rs = selectLastSeq.executeQuery()) {
                    // MAX over no rows is NULL, which getLong reads as 0.
                    return rs.next() ? rs.getLong(1) : 0;
                }
            } catch (SQLException e) {
                throw readFailure("the last seq of conversation " + conversationId, e);
            }
        }
    }

    @Override
    public List<Envelope> events(String conversationId, long afterSeq, int limit) {
        // SQLite reads a negative LIMIT as no limit at all.
        if (limit <= 0) {
            return List.of();
        }
        synchronized (reader) {
            requireOpen();
            try {
                selectEvents.setString(1, conversationId);
                selectEvents.setLong(2, afterSeq);
                selectEvents.setInt(3, limit);
                try (ResultSet rs = selectEvents.executeQuery()) {
                    return StoredRows.events(conversationId, rs);
                }
            } catch (SQLException e) {
                throw readFailure("events of conversation " + conversationId, e);
            }
        }
    }

    @Override
    public List<InputMessage> messages(String conversationId) {
        synchronized (reader) {
            requireOpen();
            try {
                selectMessages.setString(1, conversationId);
                try (ResultSet rs = selectMessages.executeQuery()) {
                    return StoredRows.messages(rs);
                }
            } catch (SQLException e) {
                throw readFailure("messages of conversation " + conversationId, e);
            }
        }
    }

    @Override
    public Optional<ApprovalRecord> approval(String approvalId) {
        synchronized (reader) {
            requireOpen();
            try {
                selectApproval.setString(1, approvalId);
                List<ApprovalRecord> found = approvals(selectApproval);
                return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
            } catch (SQLException e) {
                throw readFailure("approval " + approvalId, e);
            }
        }
    }

    @Override
    public List<ApprovalRecord> pendingApprovals(String conversationId) {
        synchronized (reader) {
            requireOpen();
            try {
                selectPendingApprovals.setString(1, conversationId);
                return approvals(selectPendingApprovals);
            } catch (SQLException e) {
                throw readFailure("pending approvals of conversation " + conversationId, e);
            }
        }
    }

    @Override
    public List<ApprovalRecord> pendingApprovals(int limit, int offset) {
        synchronized (reader) {
            requireOpen();
            try {
                selectAllPendingApprovals.setInt(1, Math.max(0, limit));
                selectAllPendingApprovals.setInt(2, Math.max(0, offset));
                return approvals(selectAllPendingApprovals);
            } catch (SQLException e) {
                throw readFailure("pending approvals", e);
            }
        }
    }

    @Override
    public List<Envelope> unfinishedRuns() {
        synchronized (reader) {
            requireOpen();
            try (ResultSet rs = selectUnfinishedRuns.executeQuery()) {
                return StoredRows.runStarts(rs);
            } catch (SQLException e) {
                throw readFailure("unfinished runs", e);
            }
        }
    }

    @Override
    public int countPendingApprovals() {
        synchronized (reader) {
            requireOpen();
            try (ResultSet rs = countAllPendingApprovals.executeQuery()) {
                return rs.next() ? rs.getInt(1) : 0;
            } catch (SQLException e) {
                throw readFailure("the number of pending approvals", e);
            }
        }
    }

    @Override
    public boolean putDocument(String collection, String id, String json, boolean replace) {
        writing.lock();
        try {
            requireOpen();
            insertDocument.setString(1, collection);
            insertDocument.setString(2, id);
            insertDocument.setString(3, collection);
            insertDocument.setString(4, json);
            if (insertDocument.executeUpdate() == 1) {
                return true;
            }
            if (!replace) {
                return false;
            }
            replaceDocument.setString(1, json);
            replaceDocument.setString(2, collection);
            replaceDocument.setString(3, id);
            return replaceDocument.executeUpdate() == 1;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot store document " + collection + "/" + id + " in " + file
                    + ": " + e.getMessage(), e);
        } finally {
            writing.unlock();
        }
    }

    @Override
    public Optional<String> document(String collection, String id) {
        synchronized (reader) {
            requireOpen();
            try {
                selectDocument.setString(1, collection);
                selectDocument.setString(2, id);
                try (ResultSet rs = selectDocument.executeQuery()) {
                    return rs.next() ? Optional.of(rs.getString(1)) : Optional.empty();
                }
            } catch (SQLException e) {
                throw readFailure("document " + collection + "/" + id, e);
            }
        }
    }

    @Override
    public List<String> documents(String collection) {
        synchronized (reader) {
            requireOpen();
            try {
                selectDocuments.setString(1, collection);
                List<String> out = new ArrayList<>();
                try (ResultSet rs = selectDocuments.executeQuery()) {
                    while (rs.next()) {
                        out.add(rs.getString(1));
                    }
                }
                return out;
            } catch (SQLException e) {
                throw readFailure("documents of " + collection, e);
            }
        }
    }

    private static List<ApprovalRecord> approvals(PreparedStatement query) throws SQLException {
        try (ResultSet rs = query.executeQuery()) {
            return StoredRows.approvals(rs);
        }
    }

    private IllegalStateException readFailure(String what, SQLException e) {
        return new IllegalStateException("cannot read " + what + " from " + file + ": " + e.getMessage(), e);
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the store " + file + " is closed");
        }
    }

    @Override
    public void close() {
        writing.lock();
        try {
            synchronized (reader) {
                if (closed) {
                    return;
                }
                closed = true;
                IllegalStateException failure = new IllegalStateException("cannot close the store " + file);
                synchronized (seqs) {
                    closeQuietly(seqs, failure);
                }
                closeQuietly(reader, failure);
                closeQuietly(writer, failure);
                if (failure.getSuppressed().length > 0) {
                    throw failure;
                }
            }
        } finally {
            writing.unlock();
        }
    }
}
