package dev.switchboard.store.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.EventCodec;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.LogContext;
import dev.switchboard.core.Plural;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ConversationRecord;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.StoreBatch;
import dev.switchboard.core.spi.StoredRows;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

/**
 * A {@link ConversationStore} in a PostgreSQL database, through a pool of connections: the writer's
 * batches, the seq reservations and the reads each take a connection of their own, so a
 * reservation commits beside a large batch rather than behind it.
 */
public final class PostgresConversationStore implements ConversationStore {
    private static final Logger log = LoggerFactory.getLogger(PostgresConversationStore.class);
    /** The schema this code creates and reads: the highest version in the {@code schema_version} table. */
    public static final int SCHEMA_VERSION = 3;

    /**
     * The migrations, the i-th bringing the schema to version i + 1; each runs in the transaction
     * that records it in {@code schema_version}.
     */
    private static final List<List<String>> MIGRATIONS = List.of(List.of(
            """
            CREATE TABLE conversations (
                id         text PRIMARY KEY,
                owner      text,
                created_at bigint NOT NULL
            )""",
            """
            CREATE TABLE messages (
                position        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                conversation_id text NOT NULL REFERENCES conversations (id),
                id              text NOT NULL,
                run_id          text,
                role            text NOT NULL,
                content         text NOT NULL,
                tool_calls      text,
                tool_call_id    text,
                name            text,
                created_at      bigint NOT NULL
            )""",
            "CREATE INDEX messages_by_conversation ON messages (conversation_id, position)",
            // The payload is the event's JSON as EventCodec wrote it, stored and read back as text: the
            // store never looks inside, and text costs no parse on insert.
            """
            CREATE TABLE events (
                conversation_id text NOT NULL REFERENCES conversations (id),
                seq             bigint NOT NULL,
                run_id          text,
                ts              bigint NOT NULL,
                kind            text NOT NULL,
                payload         text NOT NULL,
                PRIMARY KEY (conversation_id, seq)
            )""",
            "CREATE INDEX run_bounds ON events (kind, conversation_id, run_id) WHERE " + StoredRows.RUN_BOUNDS,
            """
            CREATE TABLE approvals (
                position        bigint GENERATED ALWAYS AS IDENTITY,
                id              text PRIMARY KEY,
                conversation_id text NOT NULL REFERENCES conversations (id),
                run_id          text,
                seq             bigint NOT NULL,
                request         text NOT NULL,
                status          text NOT NULL,
                feedback        text,
                decided_by      text,
                decided_at      bigint
            )""",
            "CREATE INDEX approvals_by_status ON approvals (conversation_id, status, seq)",
            "CREATE INDEX approvals_pending ON approvals (position) WHERE status = 'PENDING'",
            """
            CREATE TABLE documents (
                collection text NOT NULL,
                id         text NOT NULL,
                position   bigint GENERATED ALWAYS AS IDENTITY,
                body       text NOT NULL,
                PRIMARY KEY (collection, id)
            )""",
            "CREATE INDEX documents_in_order ON documents (collection, position)",
            // Each conversation's highest seq that may have been shown to a client before it was stored.
            """
            CREATE TABLE seq_reservations (
                conversation_id text PRIMARY KEY,
                reserved        bigint NOT NULL
            )"""),
            // Version 2: a run's start learns which of the messages a client sent the conversation holds
            // from this index rather than from its history.
            List.of("CREATE INDEX messages_by_id ON messages (conversation_id, id)"),
            // Version 3: the fence of each conversation a node took over from a writer that may still
            // be writing (see raiseFence); a conversation without a row has fence 0.
            List.of("""
                    CREATE TABLE writer_fences (
                        conversation_id text PRIMARY KEY,
                        fence           bigint NOT NULL
                    )"""));

    /** The advisory lock that gateways starting together on one database take to migrate it one at a time. */
    private static final long MIGRATION_LOCK = 0x5377_6974_6368_6264L;

    /**
     * The first key of the advisory locks that order fenced writes against the raising of a fence;
     * the second is the conversation's {@link #fenceBucket}. A batch takes its buckets shared, a
     * fence is raised under its bucket's lock held exclusively.
     */
    static final int FENCE_LOCK = 0x5362_4663;
    /**
     * How many buckets the conversations' fences are locked in: a batch takes at most this many
     * locks (PostgreSQL's lock table holds 64 a transaction by default), and raising a fence holds
     * up only the batches that write a conversation of its bucket, for the moment it takes.
     */
    private static final int FENCE_BUCKETS = 64;
    private static final String LOCK_FENCE_BUCKETS_SHARED =
            "SELECT count(pg_advisory_xact_lock_shared(" + FENCE_LOCK + ", b)) FROM unnest(?::int[]) AS b";
    private static final String RAISE_FENCE = """
            INSERT INTO writer_fences (conversation_id, fence) VALUES (?, ?)
            ON CONFLICT (conversation_id) DO UPDATE SET fence = GREATEST(writer_fences.fence + 1, excluded.fence)
            RETURNING fence""";

    private static final String INSERT_CONVERSATION =
            "INSERT INTO conversations (id, owner, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING";
    private static final String INSERT_MESSAGE = """
            INSERT INTO messages (conversation_id, id, run_id, role, content, tool_calls, tool_call_id, name,
                                  created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""";
    private static final String INSERT_EVENT =
            "INSERT INTO events (conversation_id, seq, run_id, ts, kind, payload) VALUES (?, ?, ?, ?, ?, ?)";
    private static final String UPSERT_APPROVAL = """
            INSERT INTO approvals (id, conversation_id, run_id, seq, request, status, feedback, decided_by,
                                   decided_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET conversation_id = excluded.conversation_id, run_id = excluded.run_id,
                seq = excluded.seq, request = excluded.request, status = excluded.status,
                feedback = excluded.feedback, decided_by = excluded.decided_by, decided_at = excluded.decided_at""";
    private static final String LAST_SEQ = """
            SELECT GREATEST((SELECT MAX(seq) FROM events WHERE conversation_id = ?),
                            (SELECT reserved FROM seq_reservations WHERE conversation_id = ?))""";
    private static final String RAISE_RESERVATION = """
            INSERT INTO seq_reservations (conversation_id, reserved) VALUES (?, ?)
            ON CONFLICT (conversation_id) DO UPDATE SET reserved = GREATEST(seq_reservations.reserved, excluded.reserved)""";
    private static final String UPSERT_RESERVATION = """
            INSERT INTO seq_reservations (conversation_id, reserved) VALUES (?, ?)
            ON CONFLICT (conversation_id) DO UPDATE SET reserved = excluded.reserved""";
    private static final String APPROVAL_COLUMNS =
            "SELECT conversation_id, run_id, seq, request, status, feedback, decided_by, decided_at FROM approvals";

    private final PostgresUrl url;
    private final HikariDataSource pool;
    private volatile boolean closed;

    private PostgresConversationStore(PostgresUrl url, HikariDataSource pool) {
        this.url = url;
        this.pool = pool;
    }

    /**
     * Connects a pool of {@code poolSize} connections and creates or migrates the schema.
     *
     * @throws IllegalStateException naming {@code host:port/db} when the database cannot be reached or
     *     has a schema newer than {@link #SCHEMA_VERSION}
     */
    static PostgresConversationStore open(PostgresUrl url, int poolSize) {
        return open(url, poolSize, IDLE_IN_TRANSACTION);
    }

    /**
     * How long PostgreSQL lets a session of the store sit idle inside a transaction before it ends
     * the session. The store's transactions send their statements back to back, so only a gateway
     * that stopped mid-transaction (paused, frozen, cut off) leaves one idle; ended, the transaction
     * lets go of the fence buckets a batch holds, which a node taking the conversations over waits
     * for, and which every other node's batches then queue behind.
     */
    static final Duration IDLE_IN_TRANSACTION = Duration.ofSeconds(10);

    /** {@link #open(PostgresUrl, int)} with another {@link #IDLE_IN_TRANSACTION} (for tests). */
    static PostgresConversationStore open(PostgresUrl url, int poolSize, Duration idleInTransaction) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("switchboard-store");
        config.setJdbcUrl(url.jdbcUrl());
        config.setUsername(url.user());
        config.setPassword(url.password());
        config.setMaximumPoolSize(poolSize);
        config.setMinimumIdle(Math.min(2, poolSize));
        // The driver sends a JDBC batch of inserts as multi-row INSERTs: one statement per up to 128 rows.
        config.addDataSourceProperty("reWriteBatchedInserts", "true");
        config.addDataSourceProperty("ApplicationName", "switchboard");
        config.addDataSourceProperty("options", "-c idle_in_transaction_session_timeout="
                + idleInTransaction.toMillis());
        HikariDataSource pool;
        try {
            pool = new HikariDataSource(config);
        } catch (HikariPool.PoolInitializationException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new IllegalStateException("cannot open the store " + url + ": " + cause.getMessage(), e);
        }
        try {
            migrate(url, pool);
            return new PostgresConversationStore(url, pool);
        } catch (SQLException e) {
            pool.close();
            throw new IllegalStateException("cannot open the store " + url + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            pool.close();
            throw e;
        }
    }

    /** Brings the schema to {@link #SCHEMA_VERSION}, in one transaction; refuses a newer one, changing nothing. */
    private static void migrate(PostgresUrl url, HikariDataSource pool) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            try {
                s.execute("SELECT pg_advisory_xact_lock(" + MIGRATION_LOCK + ")");
                s.execute("""
                        CREATE TABLE IF NOT EXISTS schema_version (
                            version    integer PRIMARY KEY,
                            applied_at timestamptz NOT NULL DEFAULT now()
                        )""");
                int version;
                try (ResultSet rs = s.executeQuery("SELECT COALESCE(MAX(version), 0) FROM schema_version")) {
                    rs.next();
                    version = rs.getInt(1);
                }
                if (version > SCHEMA_VERSION) {
                    throw new IllegalStateException("the store " + url + " has schema version " + version
                            + ", newer than version " + SCHEMA_VERSION + " that this gateway knows;"
                            + " open it with the newer gateway");
                }
                for (int v = version + 1; v <= SCHEMA_VERSION; v++) {
                    for (String ddl : MIGRATIONS.get(v - 1)) {
                        s.execute(ddl);
                    }
                    s.execute("INSERT INTO schema_version (version) VALUES (" + v + ")");
                }
                c.commit();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
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
        Set<String> fencedOff;
        try (Connection c = connection()) {
            c.setAutoCommit(false);
            try {
                fencedOff = batch.fences().isEmpty() ? Set.of() : fencedOff(c, batch.fences());
                stage(c, batch, fencedOff);
                c.commit();
            } catch (SQLException | RuntimeException e) {
                rollback(c, e);
                throw e;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(describeFailure(batch, e), e);
        }
        for (String conversationId : fencedOff) {
            long events = batch.events().stream().filter(e -> e.conversationId().equals(conversationId)).count();
            try (LogContext.Scope ids = LogContext.open(conversationId, null)) {
                log.warn("conversation {} was taken over by another node: {} written under fence {} not stored",
                        conversationId, Plural.of(events, "event"), batch.fenceOf(conversationId));
            }
        }
    }

    /**
     * Locks the fence buckets of the batch's fenced conversations (shared, until the transaction
     * ends, so that no fence of them is raised before the batch commits) and answers those whose
     * fence is now above the one the batch writes them under.
     */
    private static Set<String> fencedOff(Connection c, Map<String, Long> fences) throws SQLException {
        Integer[] buckets = fences.keySet().stream().map(PostgresConversationStore::fenceBucket).distinct().sorted()
                .toArray(Integer[]::new);
        try (PreparedStatement s = c.prepareStatement(LOCK_FENCE_BUCKETS_SHARED)) {
            // In ascending order, as every batch takes them: two batches and two raised fences never
            // wait for each other in a circle.
            s.setArray(1, c.createArrayOf("integer", buckets));
            s.executeQuery().close();
        }
        Set<String> off = new HashSet<>();
        try (PreparedStatement s = c.prepareStatement(
                "SELECT conversation_id, fence FROM writer_fences WHERE conversation_id = ANY(?)")) {
            s.setArray(1, c.createArrayOf("text", fences.keySet().toArray()));
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    if (rs.getLong(2) > fences.get(rs.getString(1))) {
                        off.add(rs.getString(1));
                    }
                }
            }
        }
        return off;
    }

    static int fenceBucket(String conversationId) {
        return Math.floorMod(conversationId.hashCode(), FENCE_BUCKETS);
    }

    @Override
    public long raiseFence(String conversationId, long atLeast) {
        return underFence(conversationId, c -> raiseFence(c, conversationId, atLeast));
    }

    /** {@inheritDoc} One transaction, under the fence's lock: a read of the last seq behind it sees every batch fenced off. */
    @Override
    public RaisedFence raiseFenceAndReserve(String conversationId, long atLeast, long reserve) {
        return underFence(conversationId, c -> {
            long fence = raiseFence(c, conversationId, atLeast);
            long lastSeq;
            try (PreparedStatement last = c.prepareStatement(LAST_SEQ)) {
                last.setString(1, conversationId);
                last.setString(2, conversationId);
                try (ResultSet rs = last.executeQuery()) {
                    // GREATEST of two NULLs is NULL, which getLong reads as 0.
                    lastSeq = rs.next() ? rs.getLong(1) : 0L;
                }
            }
            try (PreparedStatement reservation = c.prepareStatement(RAISE_RESERVATION)) {
                reservation.setString(1, conversationId);
                reservation.setLong(2, lastSeq + reserve);
                reservation.executeUpdate();
            }
            return new RaisedFence(fence, lastSeq);
        });
    }

    /** Work in a transaction of its own that first takes the conversation's fence bucket, exclusively. */
    private interface FenceWork<T> {
        T run(Connection c) throws SQLException;
    }

    private <T> T underFence(String conversationId, FenceWork<T> work) {
        requireOpen();
        try (Connection c = connection()) {
            c.setAutoCommit(false);
            try (Statement lock = c.createStatement()) {
                // Exclusive: waits for every batch writing a conversation of the bucket to commit.
                lock.execute("SELECT pg_advisory_xact_lock(" + FENCE_LOCK + ", " + fenceBucket(conversationId) + ")");
                T result = work.run(c);
                c.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                rollback(c, e);
                throw e;
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot raise the fence of conversation " + conversationId + " in " + url
                    + ": " + e.getMessage(), e);
        }
    }

    /** Raises the conversation's fence to {@code atLeast}, or one above its fence; holding its bucket's lock. */
    private static long raiseFence(Connection c, String conversationId, long atLeast) throws SQLException {
        try (PreparedStatement raise = c.prepareStatement(RAISE_FENCE)) {
            raise.setString(1, conversationId);
            raise.setLong(2, atLeast);
            try (ResultSet rs = raise.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Adds the batch's rows to the transaction, but those of the conversations in {@code fencedOff}. */
    private static void stage(Connection c, StoreBatch batch, Set<String> fencedOff) throws SQLException {
        if (!batch.conversations().isEmpty()) {
            try (PreparedStatement s = c.prepareStatement(INSERT_CONVERSATION)) {
                for (ConversationRecord r : batch.conversations()) {
                    s.setString(1, r.id());
                    s.setString(2, r.owner());
                    s.setLong(3, r.createdAt());
                    s.addBatch();
                }
                s.executeBatch();
            }
        }
        if (!batch.messages().isEmpty()) {
            try (PreparedStatement s = c.prepareStatement(INSERT_MESSAGE)) {
                for (StoreBatch.MessageRow row : batch.messages()) {
                    if (!fencedOff.contains(row.conversationId())) {
                        StoredRows.bindMessage(s, row);
                        s.addBatch();
                    }
                }
                s.executeBatch();
            }
        }
        if (!batch.events().isEmpty()) {
            try (PreparedStatement s = c.prepareStatement(INSERT_EVENT)) {
                for (int i = 0; i < batch.events().size(); i++) {
                    if (!fencedOff.contains(batch.events().get(i).conversationId())) {
                        StoredRows.bindEvent(s, batch, i);
                        s.addBatch();
                    }
                }
                s.executeBatch();
            }
        }
        if (!batch.approvals().isEmpty()) {
            // One multi-row upsert may not touch a row twice: an approval asked and decided within
            // one batch is written once, as it stands last, where it was first asked.
            Map<String, ApprovalRecord> latest = new LinkedHashMap<>();
            batch.approvals().stream().filter(a -> !fencedOff.contains(a.conversationId()))
                    .forEach(a -> latest.put(a.approvalId(), a));
            try (PreparedStatement s = c.prepareStatement(UPSERT_APPROVAL)) {
                for (ApprovalRecord a : latest.values()) {
                    StoredRows.bindApproval(s, a);
                    s.addBatch();
                }
                s.executeBatch();
            }
        }
    }

    /** Stores reservations in their own short transaction on a connection of their own; durable when this returns. */
    private void reserve(List<StoreBatch.Reservation> reservations) {
        // The newest reservation of a conversation wins; in id order, so that two gateways giving back
        // seqs at once lock the rows in one order and never deadlock.
        Map<String, Long> newest = new TreeMap<>();
        reservations.forEach(r -> newest.put(r.conversationId(), r.upTo()));
        try (Connection c = connection(); PreparedStatement s = c.prepareStatement(UPSERT_RESERVATION)) {
            c.setAutoCommit(false);
            try {
                for (Map.Entry<String, Long> r : newest.entrySet()) {
                    s.setString(1, r.getKey());
                    s.setLong(2, r.getValue());
                    s.addBatch();
                }
                s.executeBatch();
                c.commit();
            } catch (SQLException | RuntimeException e) {
                rollback(c, e);
                throw e;
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot store seq reservations in " + url + ": " + e.getMessage(), e);
        }
    }

    /** The event's stored JSON, encoded on the emitting thread rather than by the writer. */
    @Override
    public Object prepare(Envelope event) {
        return EventCodec.toJson(event.event());
    }

    private static void rollback(Connection c, Exception cause) {
        try {
            c.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    private String describeFailure(StoreBatch batch, SQLException e) {
        // 23503 foreign_key_violation: a row of the batch names a conversation that is not stored.
        String reason = "23503".equals(e.getSQLState())
                ? "it names a conversation that is not stored (FOREIGN KEY violation: " + e.getMessage() + ")"
                : e.getMessage();
        return batch.rollbackMessage(this::stored, url.toString(), reason);
    }

    /** Whether the event's seq is stored, for describing a failed batch; false when that cannot be read. */
    private boolean stored(Envelope e) {
        try (Connection c = connection();
             PreparedStatement s = c.prepareStatement("SELECT 1 FROM events WHERE conversation_id = ? AND seq = ?")) {
            s.setString(1, e.conversationId());
            s.setLong(2, e.seq());
            try (ResultSet rs = s.executeQuery()) {
                return rs.next();
            }
        } catch (SQLException ignored) {
            return false;
        }
    }

    @Override
    public Optional<ConversationRecord> conversation(String conversationId) {
        return read("conversation " + conversationId, "SELECT owner, created_at FROM conversations WHERE id = ?",
                s -> s.setString(1, conversationId),
                rs -> rs.next() ? Optional.of(new ConversationRecord(conversationId, rs.getString(1), rs.getLong(2)))
                        : Optional.empty());
    }

    @Override
    public long lastSeq(String conversationId) {
        return read("the last seq of conversation " + conversationId, LAST_SEQ,
                s -> {
                    s.setString(1, conversationId);
                    s.setString(2, conversationId);
                },
                // GREATEST of two NULLs is NULL, which getLong reads as 0.
                rs -> rs.next() ? rs.getLong(1) : 0L);
    }

    @Override
    public long lastEventSeq(String conversationId) {
        return read("the last event of conversation " + conversationId,
                "SELECT MAX(seq) FROM events WHERE conversation_id = ?", s -> s.setString(1, conversationId),
                // MAX over no rows is NULL, which getLong reads as 0.
                rs -> rs.next() ? rs.getLong(1) : 0L);
    }

    @Override
    public boolean shared() {
        return true;
    }

    @Override
    public List<Envelope> events(String conversationId, long afterSeq, int limit) {
        if (limit <= 0) {
            return List.of();
        }
        return read("events of conversation " + conversationId, """
                SELECT seq, run_id, ts, payload FROM events
                WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?""",
                s -> {
                    s.setString(1, conversationId);
                    s.setLong(2, afterSeq);
                    s.setInt(3, limit);
                },
                rs -> StoredRows.events(conversationId, rs));
    }

    /** {@inheritDoc} From the run-bounds index, read backwards from {@code upToSeq}. */
    @Override
    public Optional<Envelope> lastRunBoundary(String conversationId, long upToSeq) {
        return read("the last run start or end of conversation " + conversationId,
                "SELECT seq, run_id, ts, payload FROM events WHERE conversation_id = ? AND seq <= ? AND "
                        + StoredRows.RUN_BOUNDS + " ORDER BY seq DESC LIMIT 1",
                s -> {
                    s.setString(1, conversationId);
                    s.setLong(2, upToSeq);
                },
                rs -> StoredRows.events(conversationId, rs).stream().findFirst());
    }

    @Override
    public List<InputMessage> messages(String conversationId) {
        return read("messages of conversation " + conversationId, """
                SELECT id, role, content, tool_calls, tool_call_id, name FROM messages
                WHERE conversation_id = ? ORDER BY position""",
                s -> s.setString(1, conversationId), StoredRows::messages);
    }

    @Override
    public Set<String> knownMessageIds(String conversationId, Collection<String> ids) {
        return read("message ids of conversation " + conversationId,
                "SELECT id FROM messages WHERE conversation_id = ? AND id = ANY (?)",
                s -> {
                    s.setString(1, conversationId);
                    s.setArray(2, s.getConnection().createArrayOf("text", ids.toArray()));
                },
                rs -> {
                    Set<String> known = new HashSet<>();
                    while (rs.next()) {
                        known.add(rs.getString(1));
                    }
                    return known;
                });
    }

    @Override
    public Optional<ApprovalRecord> approval(String approvalId) {
        return read("approval " + approvalId, APPROVAL_COLUMNS + " WHERE id = ?", s -> s.setString(1, approvalId),
                rs -> StoredRows.approvals(rs).stream().findFirst());
    }

    @Override
    public List<ApprovalRecord> pendingApprovals(String conversationId) {
        return read("pending approvals of conversation " + conversationId,
                APPROVAL_COLUMNS + " WHERE conversation_id = ? AND status = 'PENDING' ORDER BY seq",
                s -> s.setString(1, conversationId), StoredRows::approvals);
    }

    @Override
    public List<ApprovalRecord> pendingApprovals(int limit, int offset) {
        return read("pending approvals",
                APPROVAL_COLUMNS + " WHERE status = 'PENDING' ORDER BY position LIMIT ? OFFSET ?",
                s -> {
                    s.setInt(1, Math.max(0, limit));
                    s.setInt(2, Math.max(0, offset));
                },
                StoredRows::approvals);
    }

    @Override
    public int countPendingApprovals() {
        return read("the number of pending approvals", "SELECT COUNT(*) FROM approvals WHERE status = 'PENDING'",
                s -> { }, rs -> rs.next() ? rs.getInt(1) : 0);
    }

    @Override
    public List<Envelope> unfinishedRuns() {
        return read("unfinished runs", StoredRows.UNFINISHED_RUNS, s -> { }, StoredRows::runStarts);
    }

    /** One statement, so that gateways sharing the database never race between an insert and an update. */
    @Override
    public boolean putDocument(String collection, String id, String json, boolean replace) {
        requireOpen();
        // A replaced document keeps its position: the upsert's update leaves the identity column alone.
        String sql = "INSERT INTO documents (collection, id, body) VALUES (?, ?, ?) ON CONFLICT (collection, id) "
                + (replace ? "DO UPDATE SET body = excluded.body" : "DO NOTHING");
        try (Connection c = connection(); PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, collection);
            s.setString(2, id);
            s.setString(3, json);
            return s.executeUpdate() == 1;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot store document " + collection + "/" + id + " in " + url
                    + ": " + e.getMessage(), e);
        }
    }

    @Override
    public Optional<String> document(String collection, String id) {
        return read("document " + collection + "/" + id,
                "SELECT body FROM documents WHERE collection = ? AND id = ?",
                s -> {
                    s.setString(1, collection);
                    s.setString(2, id);
                },
                rs -> rs.next() ? Optional.of(rs.getString(1)) : Optional.empty());
    }

    @Override
    public List<String> documents(String collection) {
        return read("documents of " + collection, "SELECT body FROM documents WHERE collection = ? ORDER BY position",
                s -> s.setString(1, collection),
                rs -> {
                    List<String> out = new ArrayList<>();
                    while (rs.next()) {
                        out.add(rs.getString(1));
                    }
                    return out;
                });
    }

    /** Binds a query's parameters. */
    @FunctionalInterface
    private interface Binder {
        void bind(PreparedStatement s) throws SQLException;
    }

    /** Reads a query's rows. */
    @FunctionalInterface
    private interface RowReader<T> {
        T read(ResultSet rs) throws SQLException;
    }

    /** Runs one query on a connection of the pool; every committed batch is visible to it. */
    private <T> T read(String what, String sql, Binder binder, RowReader<T> reader) {
        requireOpen();
        try (Connection c = connection(); PreparedStatement s = c.prepareStatement(sql)) {
            binder.bind(s);
            try (ResultSet rs = s.executeQuery()) {
                return reader.read(rs);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read " + what + " from " + url + ": " + e.getMessage(), e);
        }
    }

    /** A connection of the store's pool (package-private for tests). */
    Connection connection() throws SQLException {
        requireOpen();
        return pool.getConnection();
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the store " + url + " is closed");
        }
    }

    /** Whether a new connection reaches the database and answers {@code SELECT 1}, within two seconds each. */
    @Override
    public String problem() {
        // A connection of its own with short timeouts: the pool's would wait its whole timeout for a
        // database that is gone, and a check must not take one the writer needs.
        Properties props = new Properties();
        if (url.user() != null) {
            props.setProperty("user", url.user());
        }
        if (url.password() != null) {
            props.setProperty("password", url.password());
        }
        props.setProperty("connectTimeout", "2");
        props.setProperty("socketTimeout", "2");
        props.setProperty("loginTimeout", "2");
        try (Connection c = DriverManager.getConnection(url.jdbcUrl(), props);
             Statement s = c.createStatement()) {
            s.execute("SELECT 1");
            return null;
        } catch (SQLException e) {
            return "cannot reach the store " + url + ": " + e.getMessage();
        }
    }

    /** Closes the pool, which waits a few seconds for a batch or read in flight to give its connection back. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        pool.close();
    }
}
