package dev.switchboard.store.sqlite;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.EventCodec;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.internal.IdFilter;
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
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/** A {@link ConversationStore} in one SQLite file, {@code switchboard.db} in the data directory. */
public final class SqliteConversationStore implements ConversationStore {
    /** Name of the database file inside the data directory. */
    public static final String FILE_NAME = "switchboard.db";

    /**
     * The schema this code creates and reads, kept in {@code PRAGMA user_version}. Version 7 changes
     * no table: a segment keeps a delta that continues the event before it as its delta alone
     * ({@link EventSegments}), which a build of version 6 or older cannot read, so such a build
     * refuses the file rather than fail on it. Version 8 keys a conversation's events and messages
     * by the integer {@code conversations.key} rather than by its id (see {@link #SCHEMA_V8}).
     * Version 9 changes no table either: a segment holds up to {@link #SEGMENT_EVENTS} events (64
     * before), and may hold a run's start (as its first event) and its end (as its last), its kind
     * then saying which of the two recovery must see ({@link #segmentKind}); a build of version 8
     * would miss the longer rows' first events and refuse such a kind, so it refuses the file.
     */
    public static final int SCHEMA_VERSION = 9;

    /**
     * The most events one row of {@code events} holds. A read finds the row of a seq among the
     * rows that start fewer than this many seqs before it, so a file whose rows are longer needs a
     * new schema version.
     */
    static final int SEGMENT_EVENTS = 128;

    /** A segment's payload grows no longer than this many characters, but for its first event. */
    static final int SEGMENT_CHARS = 64 * 1024;
    /** The indexes {@link #nextInGroup} and {@link #groupOrder} hold to start with. */
    private static final int GROUP_SCRATCH = 1024;
    /**
     * The most indexes those arrays keep between batches: the store writer's batches hold up to
     * 8,192 events (StoreWriter.MAX_BATCH); a larger batch (another writer's) takes arrays of its own.
     */
    private static final int MAX_BATCH_SCRATCH = 8192;

    /**
     * The {@code kind} of a row that holds several events (see {@link EventSegments}), none of them a
     * bound of its run that recovery must see: neither the run's start nor its end, or both.
     */
    static final String SEGMENT_KIND = "SEGMENT";

    /**
     * The page size of a file this code creates (an existing file keeps its own: SQLite changes it
     * only by rewriting the whole file). The log of a WAL file takes each page a commit dirtied in
     * two writes, its frame's header and the page, and a checkpoint one more, each a system call;
     * most of what the writer commits is new segments and messages, appended page after page, so
     * fewer, larger pages cost fewer calls for the same bytes. One client streaming without a
     * pause: 2.1 writes a run against 7.1 with SQLite's default of 4 KiB, and the writer's share of
     * the gateway's CPU a fifth less (bench/NOTES.md). 32 and 64 KiB cut the calls further but not
     * the CPU, and each dirtied page of an index is written whole.
     */
    static final int PAGE_SIZE = 16 * 1024;

    /** How many conversations the writer remembers (see {@link #remembered}). */
    private static final int REMEMBERED_CONVERSATIONS = 16_384;

    /** The approvals table, as version 1 created it and version 8 copies it (see {@link #SCHEMA_V8}). */
    private static final String APPROVALS = """
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
            )""";

    private static final String APPROVALS_BY_STATUS =
            "CREATE INDEX approvals_by_status ON approvals (conversation_id, status, seq)";

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
            APPROVALS,
            APPROVALS_BY_STATUS);

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

    /** The index crash recovery reads: only the events that start and end runs. */
    private static final String RUN_BOUNDS_INDEX =
            "CREATE INDEX IF NOT EXISTS run_bounds ON events (kind, conversation_id, run_id) WHERE " + StoredRows.RUN_BOUNDS;

    /**
     * Version 3: the index crash recovery reads holds only the events that start and end runs, so the
     * insert of every other event (most of them text deltas) no longer updates it.
     */
    private static final List<String> SCHEMA_V3 = List.of("DROP INDEX IF EXISTS events_by_kind", RUN_BOUNDS_INDEX);

    /**
     * Version 4: a row of {@code events} is a segment, the events of one conversation and run with
     * consecutive seqs from {@code seq} to {@code last_seq} that one batch wrote, so the writer binds
     * and steps a row per segment rather than per event. {@code last_seq} is NULL for a row of one
     * event, whose {@code kind} and {@code payload} are the event's own as before: every row of a
     * version 3 file, which the new column leaves as it was (no row is rewritten), and every event
     * that starts or ends a run, so crash recovery's {@code run_bounds} index and query are unchanged.
     * A row of several events has the kind {@link #SEGMENT_KIND} and the payload {@link EventSegments}
     * describes.
     */
    private static final List<String> SCHEMA_V4 = List.of(
            "ALTER TABLE events ADD COLUMN last_seq INTEGER");

    /**
     * Version 5: an index of the messages by conversation and id, so a run's start learns which of
     * the messages a client sent the conversation already holds without reading its history.
     */
    private static final List<String> SCHEMA_V5 = List.of(
            "CREATE INDEX IF NOT EXISTS messages_by_id ON messages (conversation_id, id)");

    /**
     * Version 6: {@code events} is kept in the order its rows are written (a rowid table), found by
     * the unique index {@code events_by_seq} on (conversation, seq). Keyed by (conversation, seq) as
     * before, every batch wrote its segments into as many places of the table as it had
     * conversations, splitting and rewriting whole pages of payload; now a batch's rows go to the
     * table's last pages and only their small index entries are scattered. The rows of an older
     * file are copied over once, in the old order.
     */
    private static final List<String> SCHEMA_V6 = List.of(
            """
            CREATE TABLE events_in_order (
                conversation_id TEXT NOT NULL REFERENCES conversations (id),
                seq             INTEGER NOT NULL,
                run_id          TEXT,
                ts              INTEGER NOT NULL,
                kind            TEXT NOT NULL,
                payload         TEXT NOT NULL,
                last_seq        INTEGER
            )""",
            """
            INSERT INTO events_in_order (conversation_id, seq, run_id, ts, kind, payload, last_seq)
                SELECT conversation_id, seq, run_id, ts, kind, payload, last_seq FROM events
                ORDER BY conversation_id, seq""",
            "DROP TABLE events",
            "ALTER TABLE events_in_order RENAME TO events",
            "CREATE UNIQUE INDEX events_by_seq ON events (conversation_id, seq)",
            RUN_BOUNDS_INDEX);

    /**
     * Version 8: {@code events} and {@code messages} name their conversation by {@code conversation_key},
     * an integer that {@code conversations} gives each conversation in the order they are created,
     * rather than by its id, which clients choose and is most often random. Each batch adds rows
     * for every conversation streaming at the time, and every index on those tables leads with the
     * conversation: keyed by a random id, each such conversation's entries sat on a page of their own
     * anywhere in each index, so a batch of a thousand conversations dirtied some thousand pages of
     * each (which the WAL and then its checkpoint each write whole, and reads back when the page
     * cache has let them go). Conversations created about the same time now have neighbouring keys,
     * and those streaming now are mostly the newest, so their entries share a few pages at the end
     * of each index. The key is also the parent of the foreign keys, found in the table's own b-tree.
     * Approvals, a few rows per run at most, keep the id (a foreign key to the now unique
     * {@code conversations.id}). Every table that references {@code conversations} is copied once,
     * rows in their order, messages with their positions and approvals with their rowids (their age).
     */
    private static final List<String> SCHEMA_V8 = List.of(
            // Renaming a parent table while foreign keys are on renames the references to it.
            "ALTER TABLE conversations RENAME TO conversations_v7",
            """
            CREATE TABLE conversations (
                key        INTEGER PRIMARY KEY,
                id         TEXT NOT NULL UNIQUE,
                owner      TEXT,
                created_at INTEGER NOT NULL
            )""",
            "INSERT INTO conversations (id, owner, created_at) SELECT id, owner, created_at FROM conversations_v7"
                    + " ORDER BY rowid",
            "ALTER TABLE messages RENAME TO messages_v7",
            """
            CREATE TABLE messages (
                position         INTEGER PRIMARY KEY AUTOINCREMENT,
                conversation_key INTEGER NOT NULL REFERENCES conversations (key),
                id               TEXT NOT NULL,
                run_id           TEXT,
                role             TEXT NOT NULL,
                content          TEXT NOT NULL,
                tool_calls       TEXT,
                tool_call_id     TEXT,
                name             TEXT,
                created_at       INTEGER NOT NULL
            )""",
            // LEFT JOIN: a row whose conversation is missing fails the NOT NULL, and the upgrade with it.
            """
            INSERT INTO messages (position, conversation_key, id, run_id, role, content, tool_calls, tool_call_id,
                                  name, created_at)
                SELECT m.position, c.key, m.id, m.run_id, m.role, m.content, m.tool_calls, m.tool_call_id, m.name,
                       m.created_at
                FROM messages_v7 m LEFT JOIN conversations c ON c.id = m.conversation_id ORDER BY m.position""",
            "DROP TABLE messages_v7",
            "CREATE INDEX messages_by_conversation ON messages (conversation_key, position)",
            "CREATE INDEX messages_by_id ON messages (conversation_key, id)",
            "ALTER TABLE events RENAME TO events_v7",
            """
            CREATE TABLE events (
                conversation_key INTEGER NOT NULL REFERENCES conversations (key),
                seq              INTEGER NOT NULL,
                run_id           TEXT,
                ts               INTEGER NOT NULL,
                kind             TEXT NOT NULL,
                payload          TEXT NOT NULL,
                last_seq         INTEGER
            )""",
            """
            INSERT INTO events (conversation_key, seq, run_id, ts, kind, payload, last_seq)
                SELECT c.key, e.seq, e.run_id, e.ts, e.kind, e.payload, e.last_seq
                FROM events_v7 e LEFT JOIN conversations c ON c.id = e.conversation_id ORDER BY e.rowid""",
            "DROP TABLE events_v7",
            "CREATE UNIQUE INDEX events_by_seq ON events (conversation_key, seq)",
            "CREATE INDEX run_bounds ON events (kind, conversation_key, run_id) WHERE " + StoredRows.RUN_BOUNDS,
            // The rename above pointed approvals at conversations_v7: copied to point at the new table.
            "ALTER TABLE approvals RENAME TO approvals_v7",
            APPROVALS,
            """
            INSERT INTO approvals (rowid, id, conversation_id, run_id, seq, request, status, feedback, decided_by,
                                   decided_at)
                SELECT rowid, id, conversation_id, run_id, seq, request, status, feedback, decided_by, decided_at
                FROM approvals_v7 ORDER BY rowid""",
            "DROP TABLE approvals_v7",
            APPROVALS_BY_STATUS,
            "CREATE INDEX approvals_pending ON approvals (status)",
            "DROP TABLE conversations_v7");

    /** How many ids one query of {@link #knownMessageIds} asks about, well under SQLite's bound on parameters. */
    private static final int IDS_PER_QUERY = 500;

    /**
     * How many ids the prepared query of {@link #knownMessageIds} asks about: a run's start asks about
     * one or two, and preparing a statement costs several times what running it does.
     */
    private static final int IDS_PREPARED = 8;

    /** The last seq a row holds. */
    private static final String LAST_SEQ = "IFNULL(last_seq, seq)";

    /** The key of the conversation whose id is {@code ?1}, for a query that names it by its id. */
    private static final String KEY_OF_ID = "(SELECT key FROM conversations WHERE id = ?1)";

    /**
     * A conversation's stored rows that hold a seq from {@code ?3} to {@code ?4}: since a row holds at
     * most {@link #SEGMENT_EVENTS} seqs, such a row starts after {@code ?2} = {@code ?3 - SEGMENT_EVENTS},
     * so the index {@code events_by_seq} finds them. The conversation is {@code ?1}: its key in
     * {@link #SELECT_OVERLAP_BY_KEY}, its id in {@link #SELECT_OVERLAP}.
     */
    static final String SELECT_OVERLAP_BY_KEY = overlapQuery("?1");
    static final String SELECT_OVERLAP = overlapQuery(KEY_OF_ID);

    /** A conversation's rows that hold a seq above {@code ?3}, where {@code ?2} is {@code ?3 - SEGMENT_EVENTS}. */
    static final String SELECT_EVENTS = "SELECT seq, last_seq, run_id, ts, kind, payload FROM events"
            + " WHERE conversation_key = " + KEY_OF_ID + " AND seq > ?2 AND " + LAST_SEQ + " > ?3 ORDER BY seq LIMIT ?4";

    /**
     * A conversation's highest stored seq: the last of its row that starts last, as rows never
     * overlap. By its key in {@link #SELECT_LAST_SEQ_BY_KEY}, its id in {@link #SELECT_LAST_SEQ}.
     */
    static final String SELECT_LAST_SEQ_BY_KEY = lastSeqQuery("?1");
    static final String SELECT_LAST_SEQ = lastSeqQuery(KEY_OF_ID);

    /** The key of the conversation whose id is {@code ?1} and its highest stored seq (NULL for none). */
    static final String SELECT_KNOWN = "SELECT c.key, (" + lastSeqQuery("c.key") + ") FROM conversations c WHERE c.id = ?1";

    /**
     * The runs started and not ended (see {@link StoredRows#UNFINISHED_RUNS}): rows of conversation id,
     * seq, run_id, ts, payload and last_seq, a start's row being a segment when last_seq is not NULL.
     */
    static final String SELECT_UNFINISHED_RUNS =
            "SELECT c.id, s.seq, s.run_id, s.ts, s.payload, s.last_seq FROM events s"
                    + " JOIN conversations c ON c.key = s.conversation_key"
                    + " WHERE s." + StoredRows.RUN_BOUNDS + " AND s.kind = 'RUN_STARTED' AND NOT EXISTS (SELECT 1 FROM events t"
                    + " WHERE t." + StoredRows.RUN_BOUNDS + " AND t.kind IN ('RUN_FINISHED', 'RUN_FAILED')"
                    + " AND t.conversation_key = s.conversation_key AND t.run_id = s.run_id)";

    private static String overlapQuery(String conversation) {
        return "SELECT seq FROM events WHERE conversation_key = " + conversation + " AND seq > ?2 AND seq <= ?4"
                + " AND " + LAST_SEQ + " >= ?3 LIMIT 1";
    }

    private static String lastSeqQuery(String conversation) {
        return "SELECT " + LAST_SEQ + " FROM events WHERE conversation_key = " + conversation + " ORDER BY seq DESC LIMIT 1";
    }

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

    /**
     * Every conversation id the store holds a conversation or a seq reservation of (and some it
     * does not: a Bloom filter), for {@link #surelyAbsent}: read from both files at open, and added
     * to before each write that stores a new one commits. Null once it would outgrow its bound, and
     * from then on no id is surely absent. Guarded by {@link #idsLock}.
     */
    private IdFilter storedIds;
    private final Object idsLock = new Object();

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
    private final PreparedStatement selectOverlap;
    private final PreparedStatement selectOverlapById;
    private final PreparedStatement selectKnown;
    // A batch's transaction, prepared once: the driver's setAutoCommit/commit pair runs two
    // transactions a batch and parses its SQL each time, which cost more than a small batch's rows.
    private final PreparedStatement begin;
    private final PreparedStatement commit;
    private final PreparedStatement rollback;

    private final PreparedStatement selectConversation;
    private final PreparedStatement selectLastSeq;
    private final PreparedStatement selectEvents;
    private final PreparedStatement selectMessages;
    private final PreparedStatement selectKnownIds;
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

    /*
     * A segment row is keyed by its first seq only, so the unique index no longer refuses every event
     * whose seq is stored: one inside a stored segment's range has a key of its own. The writer
     * refuses it itself, in the batch's transaction. Checking each new row's range against the
     * stored rows would cost a query a row, the very per-row cost segments are for; instead the
     * writer remembers each conversation's highest stored seq (read once from the file, then kept
     * up to date by its own commits, the only writes to the file while the store holds it) and
     * checks the stored rows only for a row that does not start above it, which the hub never
     * writes (its seqs rise) but a batch that repeats a seq does. Within a batch, a conversation's
     * events are sorted by seq, so a repeat is two equal neighbours. The writer remembers each
     * conversation's key with it, as its rows name the conversation by its key. The map is bounded:
     * a conversation it forgot is read from the file again.
     */
    /** Per conversation, what the writer knows as of its last commit; guarded by {@link #writing}. */
    private final Map<String, Known> remembered = new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Known> eldest) {
            return size() > REMEMBERED_CONVERSATIONS;
        }
    };
    /**
     * What the batch being written read or changed, into {@link #remembered} once it commits: a rolled
     * back batch leaves nothing behind, not even the key of a conversation it created, which the
     * next conversation created may then take.
     */
    private final Map<String, Known> staged = new HashMap<>();
    /** The batch's events by conversation, each group a chain through {@link #nextInGroup}; reused batch to batch. */
    private final Map<String, EventGroup> groups = new LinkedHashMap<>();
    /**
     * For each event of the batch (by its index), the index of the next event of its conversation in
     * the batch, -1 after the last: the groups' chains, in one array kept from batch to batch.
     */
    private int[] nextInGroup = new int[GROUP_SCRATCH];
    /** One group's indexes in seq order, made from its chain; kept from group to group. */
    private int[] groupOrder = new int[GROUP_SCRATCH];
    private final StringBuilder segmentPayload = new StringBuilder(4096);
    /** {@link #segmentPayload}'s bytes, bound to the row (see Utf8Payload). */
    private final Utf8Payload segmentBytes = new Utf8Payload();

    private SqliteConversationStore(Path file, Connection writer, Connection reader, Connection seqs)
            throws SQLException {
        this.file = file;
        this.writer = writer;
        this.reader = reader;
        this.seqs = seqs;
        insertConversation = writer.prepareStatement(
                "INSERT OR IGNORE INTO conversations (id, owner, created_at) VALUES (?, ?, ?)");
        insertMessage = writer.prepareStatement("""
                INSERT INTO messages (conversation_key, id, run_id, role, content, tool_calls, tool_call_id, name,
                                      created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""");
        insertEvent = writer.prepareStatement("""
                INSERT INTO events (conversation_key, seq, last_seq, run_id, ts, kind, payload)
                VALUES (?, ?, ?, ?, ?, ?, CAST(? AS TEXT))""");
        selectOverlap = writer.prepareStatement(SELECT_OVERLAP_BY_KEY);
        selectOverlapById = writer.prepareStatement(SELECT_OVERLAP);
        selectKnown = writer.prepareStatement(SELECT_KNOWN);
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
        selectLastSeq = reader.prepareStatement(SELECT_LAST_SEQ);
        selectEvents = reader.prepareStatement(SELECT_EVENTS);
        selectKnownIds = reader.prepareStatement(knownIdsQuery(IDS_PREPARED));
        selectMessages = reader.prepareStatement("SELECT id, role, content, tool_calls, tool_call_id, name FROM messages"
                + " WHERE conversation_key = " + KEY_OF_ID + " ORDER BY position");
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
        selectUnfinishedRuns = reader.prepareStatement(SELECT_UNFINISHED_RUNS);
        insertDocument = writer.prepareStatement("""
                INSERT OR IGNORE INTO documents (collection, id, position, body)
                VALUES (?, ?, (SELECT COALESCE(MAX(position), 0) + 1 FROM documents WHERE collection = ?), ?)""");
        replaceDocument = writer.prepareStatement(
                "UPDATE documents SET body = ? WHERE collection = ? AND id = ?");
        selectDocument = reader.prepareStatement("SELECT body FROM documents WHERE collection = ? AND id = ?");
        selectDocuments = reader.prepareStatement(
                "SELECT body FROM documents WHERE collection = ? ORDER BY position");
        storedIds = readStoredIds(reader, seqs);
    }

    /**
     * A filter of every conversation id either file holds, with room for as many again before it
     * adds a layer; null when there are too many for one.
     */
    private static IdFilter readStoredIds(Connection reader, Connection seqs) throws SQLException {
        long count = firstLong(reader, "SELECT COUNT(*) FROM conversations")
                + firstLong(seqs, "SELECT COUNT(*) FROM seq_reservations");
        if (count > IdFilter.GROWING_MAX_IDS / 2) {
            return null;
        }
        IdFilter ids = IdFilter.growing((int) Math.max(1024, 2 * count));
        return addIds(reader, "SELECT id FROM conversations", ids)
                && addIds(seqs, "SELECT conversation_id FROM seq_reservations", ids) ? ids : null;
    }

    private static long firstLong(Connection c, String query) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(query)) {
            return rs.next() ? rs.getLong(1) : 0;
        }
    }

    /** Adds the ids the query reads to the filter; false when it took no more. */
    private static boolean addIds(Connection c, String query, IdFilter ids) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(query)) {
            while (rs.next()) {
                if (!ids.add(rs.getString(1))) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Notes a conversation id a write is about to store, before it commits (see {@link #storedIds}).
     * One the filter may hold already is not added again: every reservation of a conversation, and
     * every release of one, comes here, and a second add would fill the filter as a new id does.
     */
    private void noteStored(String conversationId) {
        synchronized (idsLock) {
            if (storedIds != null && !storedIds.mightContain(conversationId) && !storedIds.add(conversationId)) {
                storedIds = null;
            }
        }
    }

    /** How many ids the filter of {@link #storedIds} took; -1 when it keeps none. */
    int idsNoted() {
        synchronized (idsLock) {
            return storedIds == null ? -1 : storedIds.size();
        }
    }

    /** From a filter of the ids stored, read at open and kept in step by every write (see {@link #storedIds}). */
    @Override
    public boolean surelyAbsent(String conversationId) {
        synchronized (idsLock) {
            return !closed && storedIds != null && !storedIds.mightContain(conversationId);
        }
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
        // Takes effect only in a file with no page yet: before its journal mode is set, the first write.
        pragma(c, "page_size = " + PAGE_SIZE);
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
                // A file a build of version 4 made, then marked older (as the tests of the migrations do), has the column.
                if (version < 4 && !hasColumn(c, "events", "last_seq")) {
                    for (String ddl : SCHEMA_V4) {
                        s.execute(ddl);
                    }
                }
                if (version < 5) {
                    for (String ddl : SCHEMA_V5) {
                        s.execute(ddl);
                    }
                }
                if (version < 6) {
                    for (String ddl : SCHEMA_V6) {
                        s.execute(ddl);
                    }
                }
                if (version < 8) {
                    for (String ddl : SCHEMA_V8) {
                        s.execute(ddl);
                    }
                }
                // Version 9 changes no table (see SCHEMA_VERSION): the rows of an older file are read as they are.
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

    private static boolean hasColumn(Connection c, String table, String column) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("PRAGMA table_info(" + table + ")")) {
            while (rs.next()) {
                if (column.equalsIgnoreCase(rs.getString("name"))) {
                    return true;
                }
            }
            return false;
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
                staged.clear();
                abandon(e);
                throw e;
            }
            remembered.putAll(staged);
            staged.clear();
        } catch (SQLException e) {
            throw new IllegalStateException(batch.rollbackMessage(event -> stored(event, e), file.toString(),
                    e.getMessage()), e);
        } finally {
            writing.unlock();
        }
    }

    private void stage(StoreBatch batch) throws SQLException {
        for (ConversationRecord c : batch.conversations()) {
            noteStored(c.id());
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
            // In place of the conversation's id, which bindMessage binds first.
            insertMessage.setLong(1, known(row.conversationId()).key());
            insertMessage.addBatch();
        }
        if (!batch.messages().isEmpty()) {
            insertMessage.executeBatch();
        }

        if (!batch.events().isEmpty()) {
            stageEvents(batch);
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

    /**
     * Queues the rows of the batch's events on {@link #insertEvent}: per conversation, its events in
     * seq order, cut into segments where a seq is skipped, the run changes, a segment is full
     * ({@link #SEGMENT_EVENTS}, {@link #SEGMENT_CHARS}), and around each event that starts or ends a
     * run, which is a row of its own.
     *
     * @throws SQLException when the batch repeats a seq, or has one that is stored already
     */
    private void stageEvents(StoreBatch batch) throws SQLException {
        List<Envelope> events = batch.events();
        int[] next = nextInGroup.length >= events.size() ? nextInGroup : grown(nextInGroup, events.size());
        if (next.length <= MAX_BATCH_SCRATCH) {
            nextInGroup = next;
        }
        try {
            for (int i = 0; i < events.size(); i++) {
                next[i] = -1;
                String conversationId = events.get(i).conversationId();
                EventGroup g = groups.get(conversationId);
                if (g == null) {
                    groups.put(conversationId, new EventGroup(i));
                } else {
                    next[g.last] = i;
                    g.last = i;
                    g.size++;
                }
            }
            for (Map.Entry<String, EventGroup> group : groups.entrySet()) {
                EventGroup g = group.getValue();
                stageConversation(batch, group.getKey(), inSeqOrder(g, next, events), g.size);
            }
        } finally {
            groups.clear();
        }
    }

    /**
     * The group's indexes ordered by the events' seqs, those of equal seqs in batch order: in
     * {@link #groupOrder} (or an array of its own when the group is longer than is kept), valid until
     * the next group's.
     */
    private int[] inSeqOrder(EventGroup g, int[] next, List<Envelope> events) {
        int[] order = groupOrder.length >= g.size ? groupOrder : grown(groupOrder, g.size);
        if (order.length <= MAX_BATCH_SCRATCH) {
            groupOrder = order;
        }
        int k = 0;
        for (int i = g.first; i >= 0; i = next[i]) {
            order[k++] = i;
        }
        for (int j = 1; j < k; j++) {
            if (events.get(order[j]).seq() < events.get(order[j - 1]).seq()) {
                // Out of order (the emitters queue each conversation's events in seq order, so rare):
                // a stable sort keeps equal seqs in batch order, and the writer refuses those.
                int[] sorted = Arrays.stream(order, 0, k).boxed()
                        .sorted((a, b) -> Long.compare(events.get(a).seq(), events.get(b).seq()))
                        .mapToInt(Integer::intValue).toArray();
                System.arraycopy(sorted, 0, order, 0, k);
                break;
            }
        }
        return order;
    }

    /**
     * An array for at least {@code needed} indexes in place of {@code scratch}: twice as large (so
     * batches that grow a little at a time do not make an array each), up to what is kept.
     */
    private static int[] grown(int[] scratch, int needed) {
        return new int[Math.max(needed, Math.min(2 * scratch.length, MAX_BATCH_SCRATCH))];
    }

    /**
     * Queues the rows of one conversation's events of the batch: the first {@code n} of
     * {@code order}, their indexes in seq order.
     */
    private void stageConversation(StoreBatch batch, String conversationId, int[] order, int n)
            throws SQLException {
        List<Envelope> events = batch.events();
        Known conversation = known(conversationId);
        long storedHigh = conversation.storedUpTo();
        StringBuilder payload = segmentPayload;
        Envelope first = null;
        String firstJson = null;
        Event previous = null;
        int count = 0;
        long previousSeq = 0;
        for (int k = 0; k < n; k++) {
            int i = order[k];
            Envelope e = events.get(i);
            if (k > 0 && e.seq() == previousSeq) {
                throw new SQLException("the batch repeats seq " + e.seq() + " of conversation " + conversationId);
            }
            Event.Kind kind = e.event().kind();
            String prepared = batch.prepared(i) instanceof String json ? json : null;
            // A run's start is always the first event of its row, which is what the row's kind tells.
            boolean joined = count > 0 && kind != Event.Kind.RUN_STARTED && e.seq() == previousSeq + 1
                    && count < SEGMENT_EVENTS
                    && Objects.equals(e.runId(), first.runId())
                    && EventSegments.append(payload, first.timestamp(), previous, e.timestamp(), e.event(), prepared,
                            SEGMENT_CHARS);
            if (!joined) {
                if (count > 0) {
                    stageRow(conversation.key(), first, firstJson, previous, previousSeq, count, storedHigh);
                }
                first = e;
                firstJson = prepared != null ? prepared : EventCodec.toJson(e.event());
                EventSegments.start(payload, firstJson);
                count = 0;
            }
            count++;
            previous = e.event();
            previousSeq = e.seq();
            // A run's end is always the last event of its row.
            if (kind == Event.Kind.RUN_FINISHED || kind == Event.Kind.RUN_FAILED) {
                stageRow(conversation.key(), first, firstJson, previous, previousSeq, count, storedHigh);
                count = 0;
            }
        }
        if (count > 0) {
            stageRow(conversation.key(), first, firstJson, previous, previousSeq, count, storedHigh);
        }
        // order is in seq order, so its last event's seq is the conversation's highest now.
        staged.put(conversationId,
                new Known(conversation.key(), Math.max(storedHigh, events.get(order[n - 1]).seq())));
    }

    /**
     * Queues one row of the conversation of {@code key}: {@code first}'s alone when {@code count} is 1,
     * else a segment of {@code count} events up to {@code last} at {@code lastSeq}, whose payload is
     * in {@link #segmentPayload}.
     */
    private void stageRow(long key, Envelope first, String firstJson, Event last, long lastSeq, int count,
                          long storedHigh) throws SQLException {
        if (first.seq() <= storedHigh) {
            refuseStored(key, first.conversationId(), first.seq(), lastSeq);
        }
        insertEvent.setLong(1, key);
        insertEvent.setLong(2, first.seq());
        insertEvent.setString(4, first.runId());
        insertEvent.setLong(5, first.timestamp());
        if (count == 1) {
            insertEvent.setNull(3, Types.BIGINT);
            insertEvent.setString(6, first.event().kind().name());
            insertEvent.setString(7, firstJson);
        } else {
            EventSegments.end(segmentPayload);
            insertEvent.setLong(3, lastSeq);
            insertEvent.setString(6, segmentKind(first.event().kind(), last.kind()));
            insertEvent.setBytes(7, segmentBytes.encode(segmentPayload));
        }
        insertEvent.addBatch();
    }

    /**
     * The kind of a segment from its first event's kind to its last's: the bound of its run that
     * crash recovery must find ({@code run_bounds} indexes these kinds). {@code RUN_STARTED} when it
     * starts a run it does not end, the end's kind when it ends a run it did not start, else
     * {@link #SEGMENT_KIND}: a run started and ended in one row is not unfinished, so neither bound
     * matters. A run's start is always a row's first event and its end a row's last, so a run started
     * in one row and ended in a later one has both a {@code RUN_STARTED} row and an end row.
     */
    private static String segmentKind(Event.Kind first, Event.Kind last) {
        boolean starts = first == Event.Kind.RUN_STARTED;
        boolean ends = last == Event.Kind.RUN_FINISHED || last == Event.Kind.RUN_FAILED;
        if (starts == ends) {
            return SEGMENT_KIND;
        }
        return starts ? first.name() : last.name();
    }

    /** Whether a row of this kind with a {@code last_seq} is a segment that {@link #segmentKind} may give. */
    private static boolean isSegmentKind(String kind) {
        return switch (kind) {
            case SEGMENT_KIND, "RUN_STARTED", "RUN_FINISHED", "RUN_FAILED" -> true;
            default -> false;
        };
    }

    /** Throws when a stored row of the conversation holds a seq from {@code fromSeq} to {@code toSeq}. */
    private void refuseStored(long key, String conversationId, long fromSeq, long toSeq) throws SQLException {
        selectOverlap.setLong(1, key);
        if (overlapsStored(selectOverlap, fromSeq, toSeq)) {
            throw new SQLException("an event of conversation " + conversationId + " from seq " + fromSeq + " to "
                    + toSeq + " is stored already");
        }
    }

    /**
     * Whether a stored row holds a seq from {@code fromSeq} to {@code toSeq}, of the conversation
     * {@code overlap} (an overlap query) has bound as its first parameter.
     */
    private static boolean overlapsStored(PreparedStatement overlap, long fromSeq, long toSeq) throws SQLException {
        overlap.setLong(2, rowsStartAfter(fromSeq));
        overlap.setLong(3, fromSeq);
        overlap.setLong(4, toSeq);
        try (ResultSet rs = overlap.executeQuery()) {
            return rs.next();
        }
    }

    /** A conversation's key and highest stored seq (0 for none), as far as the writer knows. */
    private record Known(long key, long storedUpTo) {
    }

    /**
     * What the writer knows of a conversation in the batch being written: staged by it, else
     * remembered, else read on the writer's connection (which sees the batch's own new conversations).
     *
     * @throws SQLException when the conversation is not stored
     */
    private Known known(String conversationId) throws SQLException {
        Known k = staged.get(conversationId);
        if (k == null) {
            k = remembered.get(conversationId);
        }
        if (k != null) {
            return k;
        }
        selectKnown.setString(1, conversationId);
        try (ResultSet rs = selectKnown.executeQuery()) {
            if (!rs.next()) {
                // The foreign key of its rows, which the writer checks first as it needs the key to write them.
                throw new SQLException("FOREIGN KEY constraint failed: conversation " + conversationId + " is not stored");
            }
            // The highest seq is NULL for a conversation of no events, which getLong reads as 0.
            k = new Known(rs.getLong(1), rs.getLong(2));
        }
        staged.put(conversationId, k);
        return k;
    }

    /** A bound below the first seq of every row that holds {@code seq} or a later one. */
    private static long rowsStartAfter(long seq) {
        return seq < Long.MIN_VALUE + SEGMENT_EVENTS ? Long.MIN_VALUE : seq - SEGMENT_EVENTS;
    }

    /** A batch's events of one conversation: its first and last event's index and how many (see {@link #nextInGroup}). */
    private static final class EventGroup {
        final int first;
        int last;
        int size = 1;

        EventGroup(int first) {
            this.first = first;
            this.last = first;
        }
    }

    /** Stores reservations in their own file and transaction; durable when this returns. */
    private void reserve(List<StoreBatch.Reservation> reservations) {
        synchronized (seqs) {
            requireOpen();
            try {
                for (StoreBatch.Reservation r : reservations) {
                    noteStored(r.conversationId());
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

    /**
     * The event's stored JSON, encoded on the emitting thread rather than by the writer; nothing for
     * a delta, which a segment keeps as its delta alone when it continues the event before it, as
     * most do (see {@link EventSegments}): the writer encodes the few that start a row.
     */
    @Override
    public Object prepare(Envelope event) {
        return EventSegments.DELTAS.contains(event.event().kind()) ? null : EventCodec.toJson(event.event());
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

    /** After a rollback, whether the event's seq is stored, alone or in a segment; false when that cannot be read. */
    private boolean stored(Envelope event, SQLException cause) {
        try {
            selectOverlapById.setString(1, event.conversationId());
            return overlapsStored(selectOverlapById, event.seq(), event.seq());
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
                selectEvents.setLong(2, rowsStartAfter(afterSeq));
                selectEvents.setLong(3, afterSeq);
                // Every row read holds an event to return, so no more rows than events are needed.
                selectEvents.setInt(4, limit);
                List<Envelope> out = new ArrayList<>(Math.min(limit, 256));
                try (ResultSet rs = selectEvents.executeQuery()) {
                    while (out.size() < limit && rs.next()) {
                        long seq = rs.getLong(1);
                        long lastSeq = rs.getLong(2);
                        boolean single = rs.wasNull();
                        String runId = rs.getString(3);
                        long ts = rs.getLong(4);
                        String payload = rs.getString(6);
                        if (single) {
                            // A row of one event holds a seq above afterSeq, so it is this one.
                            out.add(new Envelope(conversationId, runId, seq, ts, EventCodec.fromJson(payload)));
                        } else if (isSegmentKind(rs.getString(5))) {
                            EventSegments.read(conversationId, runId, seq, lastSeq, ts, payload, afterSeq, limit, out);
                        } else {
                            throw new IllegalStateException("stored row at seq " + seq + " of conversation "
                                    + conversationId + " has a last seq but the kind " + rs.getString(5));
                        }
                    }
                }
                return out;
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
    public Set<String> knownMessageIds(String conversationId, Collection<String> ids) {
        List<String> all = List.copyOf(ids);
        Set<String> known = new HashSet<>();
        synchronized (reader) {
            requireOpen();
            try {
                if (!all.isEmpty() && all.size() <= IDS_PREPARED) {
                    // The prepared query's places past the ids repeat the last one.
                    selectKnownIds.setString(1, conversationId);
                    for (int i = 0; i < IDS_PREPARED; i++) {
                        selectKnownIds.setString(i + 2, all.get(Math.min(i, all.size() - 1)));
                    }
                    collectIds(selectKnownIds, known);
                    return known;
                }
                for (int from = 0; from < all.size(); from += IDS_PER_QUERY) {
                    List<String> part = all.subList(from, Math.min(all.size(), from + IDS_PER_QUERY));
                    try (PreparedStatement s = reader.prepareStatement(knownIdsQuery(part.size()))) {
                        s.setString(1, conversationId);
                        for (int i = 0; i < part.size(); i++) {
                            s.setString(i + 2, part.get(i));
                        }
                        collectIds(s, known);
                    }
                }
                return known;
            } catch (SQLException e) {
                throw readFailure("message ids of conversation " + conversationId, e);
            }
        }
    }

    /** The query of which of {@code ids} ids name messages of a conversation. */
    private static String knownIdsQuery(int ids) {
        // The ids' unnumbered parameters follow ?1, from ?2 on.
        return "SELECT id FROM messages WHERE conversation_key = " + KEY_OF_ID
                + " AND id IN (" + "?,".repeat(ids - 1) + "?)";
    }

    private static void collectIds(PreparedStatement s, Set<String> into) throws SQLException {
        try (ResultSet rs = s.executeQuery()) {
            while (rs.next()) {
                into.add(rs.getString(1));
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
                List<Envelope> out = new ArrayList<>();
                while (rs.next()) {
                    String conversationId = rs.getString(1);
                    long seq = rs.getLong(2);
                    String runId = rs.getString(3);
                    long ts = rs.getLong(4);
                    String payload = rs.getString(5);
                    long lastSeq = rs.getLong(6);
                    if (rs.wasNull()) {
                        out.add(new Envelope(conversationId, runId, seq, ts, EventCodec.fromJson(payload)));
                    } else {
                        // The segment's first event is the run's start.
                        EventSegments.read(conversationId, runId, seq, lastSeq, ts, payload, seq - 1, out.size() + 1,
                                out);
                    }
                }
                return out;
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
