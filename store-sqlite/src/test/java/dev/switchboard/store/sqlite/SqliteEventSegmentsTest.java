package dev.switchboard.store.sqlite;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.EventCodec;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.Role;
import dev.switchboard.core.ToolCallRef;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ConversationRecord;
import dev.switchboard.core.spi.StoreBatch;
import dev.switchboard.core.spi.StoredRows;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static dev.switchboard.store.sqlite.SqliteFiles.query;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How the SQLite store keeps a batch's events of a conversation as segment rows (schema version 4),
 * in the order they are written (version 6), a delta that continues the event before it as its delta alone (version 7).
 */
class SqliteEventSegmentsTest {
    private static final String CONV = "conv-1";
    private static final long T0 = 1_700_000_000_000L;

    @TempDir
    Path dir;

    @Test
    void aRunsEventsOfABatchAreSegmentsOfAtMost128ItsStartARowsFirstEventAndItsEndARowsLast() throws Exception {
        List<Envelope> written = new ArrayList<>();
        written.add(new Envelope(CONV, "run-1", 1, T0, new Event.RunStarted(null)));
        written.add(new Envelope(CONV, "run-1", 2, T0, new Event.MessageStarted("m1", Role.ASSISTANT)));
        for (long seq = 3; seq <= 151; seq++) {
            // Timestamps that go back now and then, as a clock may.
            written.add(delta(CONV, "run-1", seq, T0 + seq * 3 - (seq % 7 == 0 ? 50 : 0)));
        }
        written.add(new Envelope(CONV, "run-1", 152, T0 + 999, new Event.RunFinished()));
        // A run started and not ended (its start is the first event of a segment), and a run started and ended in one row.
        List<Envelope> open = List.of(new Envelope("open", "run-o", 1, T0, new Event.RunStarted("parent")),
                new Envelope("open", "run-o", 2, T0 + 1, new Event.MessageStarted("m1", Role.ASSISTANT)),
                delta("open", "run-o", 3, T0 + 2));
        List<Envelope> whole = List.of(new Envelope("whole", "run-w", 1, T0, new Event.RunStarted(null)),
                delta("whole", "run-w", 2, T0 + 1),
                new Envelope("whole", "run-w", 3, T0 + 2, new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, "x")));
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            StoreBatch batch = new StoreBatch().addConversation(new ConversationRecord(CONV, null, T0))
                    .addConversation(new ConversationRecord("other", null, T0))
                    .addConversation(new ConversationRecord("open", null, T0))
                    .addConversation(new ConversationRecord("whole", null, T0));
            for (Envelope e : open) {
                batch.addEvent(e, store.prepare(e));
            }
            whole.forEach(batch::addEvent);
            for (int i = 0; i < written.size(); i++) {
                Envelope e = written.get(i);
                batch.addEvent(e, store.prepare(e));
                if (i % 3 == 0) {
                    batch.addEvent(delta("other", "run-9", i / 3 + 1, T0));
                }
            }
            store.write(batch);

            assertThat(store.events(CONV, 0, 1000)).isEqualTo(written);
            for (int after = 0; after <= 152; after++) {
                for (int limit : new int[] {1, 7, 64, 100}) {
                    assertThat(store.events(CONV, after, limit)).as("after %d, at most %d", after, limit)
                            .isEqualTo(written.subList(after, Math.min(written.size(), after + limit)));
                }
            }
            assertThat(store.events(CONV, -5, 2)).isEqualTo(written.subList(0, 2));
            assertThat(store.lastEventSeq(CONV)).isEqualTo(152);
            assertThat(store.lastEventSeq("other")).isEqualTo(51);
            assertThat(store.events("other", 0, 1000)).extracting(Envelope::seq)
                    .containsExactly(java.util.stream.LongStream.rangeClosed(1, 51).boxed().toArray(Long[]::new));
            assertThat(store.events("open", 0, 10)).isEqualTo(open);
            assertThat(store.events("whole", 1, 10)).isEqualTo(whole.subList(1, 3));
            assertThat(store.unfinishedRuns()).containsExactly(open.get(0));
        }
        assertThat(rows(CONV)).containsExactly("1-128 RUN_STARTED", "129-152 RUN_FINISHED");
        assertThat(rows("other")).containsExactly("1-51 SEGMENT");
        assertThat(rows("open")).containsExactly("1-3 RUN_STARTED");
        assertThat(rows("whole")).containsExactly("1-3 SEGMENT");
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            assertThat(store.unfinishedRuns()).as("after a reopen").containsExactly(open.get(0));
        }
    }

    @Test
    void segmentsAreCutWhereTheRunChangesASeqIsSkippedOrThePayloadWouldPassItsBound() throws Exception {
        String big = "x".repeat(SqliteConversationStore.SEGMENT_CHARS / 3);
        List<Envelope> written = List.of(
                delta(CONV, "run-1", 1, T0), delta(CONV, "run-1", 2, T0),
                delta(CONV, null, 3, T0), delta(CONV, null, 4, T0),
                delta(CONV, "run-2", 5, T0),
                delta(CONV, "run-2", 7, T0), delta(CONV, "run-2", 8, T0),
                text(9, big), text(10, big), text(11, big), text(12, big), text(13, "small"),
                text(14, "x".repeat(SqliteConversationStore.SEGMENT_CHARS * 2)), text(15, "after"));
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            StoreBatch batch = new StoreBatch().addConversation(new ConversationRecord(CONV, null, T0));
            written.forEach(batch::addEvent);
            store.write(batch);
            assertThat(store.events(CONV, 0, 100)).isEqualTo(written);
            assertThat(store.events(CONV, 10, 2)).isEqualTo(written.subList(9, 11));
        }
        assertThat(rows(CONV)).containsExactly("1-2 SEGMENT", "3-4 SEGMENT", "5-null TEXT_DELTA", "7-10 SEGMENT",
                "11-13 SEGMENT", "14-null TEXT_DELTA", "15-null TEXT_DELTA");
    }

    @Test
    void aBatchWrittenOutOfSeqOrderIsStoredInSeqOrderAndARepeatNextToARunBoundIsRefused() throws Exception {
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            StoreBatch batch = new StoreBatch().addConversation(new ConversationRecord(CONV, null, T0));
            for (long seq = 6; seq >= 1; seq--) {
                batch.addEvent(delta(CONV, "run-1", seq, T0 + seq));
            }
            store.write(batch);
            assertThat(store.events(CONV, 0, 10)).extracting(Envelope::seq).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);

            assertThatThrownBy(() -> store.write(new StoreBatch()
                    .addEvent(new Envelope(CONV, "run-2", 7, T0, new Event.RunStarted(null)))
                    .addEvent(delta(CONV, "run-2", 7, T0))))
                    .hasMessageContaining("seq 7 of conversation " + CONV);
            assertThat(store.lastEventSeq(CONV)).isEqualTo(6);
        }
        assertThat(rows(CONV)).containsExactly("1-6 SEGMENT");
    }

    @Test
    void aSeqInsideAStoredSegmentIsRefusedWhetherTheStoreRemembersTheConversationOrReadsItAfterAReopen() {
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            StoreBatch first = new StoreBatch().addConversation(new ConversationRecord(CONV, null, T0));
            for (long seq = 1; seq <= 10; seq++) {
                first.addEvent(delta(CONV, "run-1", seq, T0));
            }
            store.write(first);
            assertRefused(store, 5, 5);
            assertRefused(store, 9, 12);
            assertRefused(store, 10, 10);
        }
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            assertRefused(store, 5, 5);
            assertRefused(store, 1, 3);
            // Out of order across batches: a later range first, then the gap before it.
            store.write(batchOf(30, 40));
            store.write(batchOf(11, 29));
            assertRefused(store, 25, 25);
            assertRefused(store, 40, 41);
            store.write(batchOf(41, 41));
            assertThat(store.events(CONV, 0, 100)).extracting(Envelope::seq)
                    .containsExactly(java.util.stream.LongStream.rangeClosed(1, 41).boxed().toArray(Long[]::new));
            assertThat(store.lastSeq(CONV)).isEqualTo(41);
        }
    }

    @Test
    void aVersionThreeFileOfOneRowPerEventOpensWithItsHistoryAndTakesSegmentsAfterIt() throws Exception {
        Path file = dir.resolve(SqliteConversationStore.FILE_NAME);
        List<Envelope> old = List.of(
                new Envelope(CONV, "run-1", 1, T0, new Event.RunStarted(null)),
                delta(CONV, "run-1", 2, T0 + 1), delta(CONV, "run-1", 3, T0 + 2),
                new Envelope(CONV, "run-1", 4, T0 + 3, new Event.RunFinished()),
                new Envelope(CONV, "run-2", 5, T0 + 4, new Event.RunStarted(null)),
                delta(CONV, "run-2", 6, T0 + 5));
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement s = c.createStatement()) {
            s.execute("PRAGMA journal_mode = WAL");
            for (String ddl : SqliteFiles.VERSION_THREE) {
                s.execute(ddl);
            }
            s.execute("INSERT INTO conversations (id, owner, created_at) VALUES ('" + CONV + "', 'alice', " + T0 + ")");
            try (PreparedStatement insert = c.prepareStatement(
                    "INSERT INTO events (conversation_id, seq, run_id, ts, kind, payload) VALUES (?, ?, ?, ?, ?, ?)")) {
                for (int i = 0; i < old.size(); i++) {
                    StoredRows.bindEvent(insert, new StoreBatch().addEvent(old.get(i)), 0);
                    insert.executeUpdate();
                }
            }
            s.execute("PRAGMA user_version = 3");
        }

        List<Envelope> all = new ArrayList<>(old);
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            assertThat(store.events(CONV, 0, 100)).isEqualTo(old);
            assertThat(store.events(CONV, 2, 2)).isEqualTo(old.subList(2, 4));
            assertThat(store.lastSeq(CONV)).isEqualTo(6);
            assertThat(store.unfinishedRuns()).containsExactly(old.get(4));
            assertRefused(store, 3, 3);
            assertRefused(store, 6, 8);

            StoreBatch more = new StoreBatch();
            for (long seq = 7; seq <= 12; seq++) {
                Envelope e = delta(CONV, "run-2", seq, T0 + seq);
                all.add(e);
                more.addEvent(e, store.prepare(e));
            }
            Envelope end = new Envelope(CONV, "run-2", 13, T0 + 13, new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, "x"));
            all.add(end);
            store.write(more.addEvent(end));
            assertThat(store.events(CONV, 0, 100)).isEqualTo(all);
            assertThat(store.events(CONV, 5, 3)).isEqualTo(all.subList(5, 8));
            assertThat(store.unfinishedRuns()).isEmpty();
        }
        // run-2's end is the last event of a segment, which the unfinished runs above found.
        assertThat(rows(CONV)).containsExactly("1-null RUN_STARTED", "2-null TEXT_DELTA", "3-null TEXT_DELTA",
                "4-null RUN_FINISHED", "5-null RUN_STARTED", "6-null TEXT_DELTA", "7-13 RUN_FAILED");
        assertThat(query(file, "PRAGMA user_version"))
                .containsExactly(String.valueOf(SqliteConversationStore.SCHEMA_VERSION));
        assertThat(query(file, "SELECT seq FROM events ORDER BY rowid")).as("the old rows first, in their order")
                .containsExactly("1", "2", "3", "4", "5", "6", "7");
        assertThat(query(file, "SELECT sql FROM sqlite_schema WHERE name = 'events'")).singleElement()
                .asString().doesNotContainIgnoringCase("WITHOUT ROWID");
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            assertThat(store.events(CONV, 0, 100)).as("after a second open").isEqualTo(all);
        }
    }

    @Test
    void aVersionSevenFileIsKeyedByConversationInTheOrderTheyWereCreatedKeepingEveryRow() throws Exception {
        Path file = dir.resolve(SqliteConversationStore.FILE_NAME);
        // "b" was created before "a": its key comes first.
        List<Envelope> runB = List.of(new Envelope("b", "run-b", 1, T0, new Event.RunStarted(null)),
                delta("b", "run-b", 2, T0 + 1), delta("b", "run-b", 3, T0 + 2), delta("b", "run-b", 4, T0 + 3));
        List<Envelope> runA = List.of(new Envelope("a", "run-a", 1, T0, new Event.RunStarted(null)),
                delta("a", "run-a", 2, T0 + 5), new Envelope("a", "run-a", 3, T0 + 6, new Event.RunFinished()));
        InputMessage hello = new InputMessage("m-1", Role.USER, "hello", null, null, null);
        InputMessage called = new InputMessage("m-3", Role.ASSISTANT, "", List.of(new ToolCallRef("tc-1", "search", "{}")),
                null, null);
        InputMessage other = new InputMessage("m-2", Role.USER, "other", null, null, null);
        SqliteFiles.create(file, SqliteFiles.VERSION_SEVEN, 7,
                "INSERT INTO conversations (id, owner, created_at) VALUES ('b', 'bob', " + T0 + ")",
                "INSERT INTO conversations (id, owner, created_at) VALUES ('a', 'alice', " + (T0 + 1) + ")");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
             PreparedStatement message = c.prepareStatement("INSERT INTO messages (conversation_id, id, run_id, role,"
                     + " content, tool_calls, tool_call_id, name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
             PreparedStatement event = c.prepareStatement(
                     "INSERT INTO events (conversation_id, seq, run_id, ts, kind, payload) VALUES (?, ?, ?, ?, ?, ?)");
             PreparedStatement segment = c.prepareStatement("INSERT INTO events (conversation_id, seq, last_seq, run_id,"
                     + " ts, kind, payload) VALUES (?, ?, ?, ?, ?, 'SEGMENT', ?)");
             PreparedStatement approval = c.prepareStatement("INSERT INTO approvals (id, conversation_id, run_id, seq,"
                     + " request, status, feedback, decided_by, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            for (StoreBatch.MessageRow row : List.of(new StoreBatch.MessageRow("a", "run-a", hello, T0),
                    new StoreBatch.MessageRow("b", "run-b", other, T0), new StoreBatch.MessageRow("a", "run-a", called, T0))) {
                StoredRows.bindMessage(message, row);
                message.executeUpdate();
            }
            insertAlone(event, runB.get(0));
            insertAlone(event, runA.get(0));
            // b's deltas 2-4 as version 7 keeps them: the first whole, the others as their delta alone.
            StringBuilder payload = new StringBuilder();
            EventSegments.start(payload, EventCodec.toJson(runB.get(1).event()));
            for (int i = 2; i < runB.size(); i++) {
                assertThat(EventSegments.append(payload, T0 + 1, runB.get(i - 1).event(), runB.get(i).timestamp(),
                        runB.get(i).event(), null, 1000)).isTrue();
            }
            EventSegments.end(payload);
            assertThat(payload.toString()).contains(",\"part \\\"4\\\" ✓\"]");
            segment.setString(1, "b");
            segment.setLong(2, 2);
            segment.setLong(3, 4);
            segment.setString(4, "run-b");
            segment.setLong(5, T0 + 1);
            segment.setString(6, payload.toString());
            segment.executeUpdate();
            insertAlone(event, runA.get(1));
            insertAlone(event, runA.get(2));
            for (ApprovalRecord a : List.of(approval("b", "p-1", ApprovalRecord.Status.PENDING),
                    approval("b", "p-2", ApprovalRecord.Status.APPROVED), approval("a", "p-3", ApprovalRecord.Status.PENDING))) {
                StoredRows.bindApproval(approval, a);
                approval.executeUpdate();
            }
        }

        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            assertThat(store.conversation("a")).hasValue(new ConversationRecord("a", "alice", T0 + 1));
            assertThat(store.conversation("b")).hasValue(new ConversationRecord("b", "bob", T0));
            assertThat(store.events("b", 0, 100)).isEqualTo(runB);
            assertThat(store.events("b", 2, 100)).isEqualTo(runB.subList(2, 4));
            assertThat(store.events("a", 0, 100)).isEqualTo(runA);
            assertThat(store.lastSeq("b")).isEqualTo(4);
            assertThat(store.unfinishedRuns()).containsExactly(runB.get(0));
            assertThat(store.messages("a")).containsExactly(hello, called);
            assertThat(store.messages("b")).containsExactly(other);
            assertThat(store.knownMessageIds("a", List.of("m-1", "m-2", "m-3"))).containsExactlyInAnyOrder("m-1", "m-3");
            assertThat(store.pendingApprovals(10, 0)).extracting(ApprovalRecord::approvalId).containsExactly("p-1", "p-3");
            assertThat(store.pendingApprovals("b")).extracting(ApprovalRecord::approvalId).containsExactly("p-1");
            assertThat(store.approval("p-2")).get().extracting(ApprovalRecord::status)
                    .isEqualTo(ApprovalRecord.Status.APPROVED);
            assertRefusedIn(store, "b", 3);

            InputMessage later = new InputMessage("m-4", Role.USER, "later", null, null, null);
            Envelope next = delta("b", "run-b", 5, T0 + 9);
            store.write(new StoreBatch().addConversation(new ConversationRecord("c", null, T0 + 2))
                    .addMessage(new StoreBatch.MessageRow("a", "run-a2", later, T0 + 9))
                    .addEvent(next).addEvent(delta("c", "run-c", 1, T0 + 9)));
            assertThat(store.messages("a")).containsExactly(hello, called, later);
            assertThat(store.events("b", 4, 100)).containsExactly(next);
            assertThat(store.events("c", 0, 100)).extracting(Envelope::seq).containsExactly(1L);
        }
        assertThat(query(file, "SELECT id || ' ' || key FROM conversations ORDER BY key"))
                .as("keys in the order the conversations were created").containsExactly("b 1", "a 2", "c 3");
        assertThat(query(file, "SELECT position FROM messages ORDER BY position"))
                .as("positions kept, a new message after them all").containsExactly("1", "2", "3", "4");
        assertThat(query(file, "SELECT c.id || ' ' || e.seq FROM events e JOIN conversations c ON c.key = e.conversation_key"
                + " ORDER BY e.rowid")).as("rows in the order they were written")
                .containsExactly("b 1", "a 1", "b 2", "a 2", "a 3", "b 5", "c 1");
        assertThat(query(file, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                + " ORDER BY name")).containsExactly("approvals", "conversations", "documents", "events", "messages");
        assertThat(query(file, "SELECT name FROM pragma_table_info('events') UNION ALL"
                + " SELECT name FROM pragma_table_info('messages')")).contains("conversation_key")
                .doesNotContain("conversation_id");
        assertThat(query(file, "SELECT sql FROM sqlite_schema WHERE type = 'table'")).as("no reference to a table gone")
                .noneMatch(sql -> sql.contains("_v7"));
        assertThat(query(file, "PRAGMA foreign_key_check")).isEmpty();
        assertThat(query(file, "PRAGMA integrity_check")).containsExactly("ok");
        assertThat(query(file, "PRAGMA user_version")).containsExactly(String.valueOf(SqliteConversationStore.SCHEMA_VERSION));
    }

    @Test
    void aRunThatFailsToCommitLeavesNoKeyBehindForTheNextConversationToMisuse() throws Exception {
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            store.write(new StoreBatch().addConversation(new ConversationRecord("a", null, T0)).addEvent(delta("a", "r", 1, T0)));
            // "ghost" is created in a batch that fails on a repeated seq of "a": the key it was given goes back.
            assertThatThrownBy(() -> store.write(new StoreBatch().addConversation(new ConversationRecord("ghost", null, T0))
                    .addEvent(delta("ghost", "r", 1, T0)).addEvent(delta("a", "r", 1, T0))))
                    .hasMessageContaining("seq 1 of conversation a is already stored");
            assertThat(store.conversation("ghost")).isEmpty();
            store.write(new StoreBatch().addConversation(new ConversationRecord("real", null, T0))
                    .addEvent(delta("real", "r", 1, T0)));
            store.write(new StoreBatch().addEvent(delta("real", "r", 2, T0)));
            assertThat(store.events("real", 0, 10)).extracting(Envelope::seq).containsExactly(1L, 2L);
            assertThat(store.events("a", 0, 10)).extracting(Envelope::seq).containsExactly(1L);
            assertThatThrownBy(() -> store.write(new StoreBatch().addEvent(delta("ghost", "r", 1, T0))))
                    .hasMessageContaining("ghost").hasMessageContaining("FOREIGN KEY");
            assertThat(store.events("ghost", 0, 10)).isEmpty();
        }
    }

    private static void insertAlone(PreparedStatement insert, Envelope e) throws SQLException {
        StoredRows.bindEvent(insert, new StoreBatch().addEvent(e), 0);
        insert.executeUpdate();
    }

    private static ApprovalRecord approval(String conversationId, String id, ApprovalRecord.Status status) {
        Event.ApprovalRequested request = new Event.ApprovalRequested(id, "tc-" + id, "delete_file", "Delete it", null,
                null, RiskLevel.HIGH);
        return status == ApprovalRecord.Status.PENDING
                ? new ApprovalRecord(conversationId, "run-" + conversationId, 9, request, status, null, null, null)
                : new ApprovalRecord(conversationId, "run-" + conversationId, 9, request, status, "ok", "carol", T0);
    }

    private static void assertRefusedIn(SqliteConversationStore store, String conversationId, long seq) {
        assertThatThrownBy(() -> store.write(new StoreBatch().addEvent(delta(conversationId, "run-x", seq, T0))))
                .hasMessageContaining("seq " + seq + " of conversation " + conversationId + " is already stored");
    }

    @Test
    void readsAndTheWritersChecksFindRowsByTheirSeqIndex() throws Exception {
        SqliteConversationStore.open(dir).close();
        Path file = dir.resolve(SqliteConversationStore.FILE_NAME);
        for (String sql : List.of(SqliteConversationStore.SELECT_EVENTS, SqliteConversationStore.SELECT_OVERLAP,
                SqliteConversationStore.SELECT_OVERLAP_BY_KEY, SqliteConversationStore.SELECT_LAST_SEQ,
                SqliteConversationStore.SELECT_LAST_SEQ_BY_KEY, SqliteConversationStore.SELECT_KNOWN)) {
            assertThat(query(file, "EXPLAIN QUERY PLAN " + sql, "detail")).as(sql)
                    .anyMatch(step -> step.startsWith("SEARCH events USING INDEX events_by_seq (conversation_key=? AND seq>? AND seq<?)")
                            || step.startsWith("SEARCH events USING INDEX events_by_seq (conversation_key=? AND seq>?)")
                            || step.startsWith("SEARCH events USING INDEX events_by_seq (conversation_key=?)"))
                    .noneMatch(step -> step.contains("TEMP B-TREE") || step.startsWith("SCAN"));
        }
    }

    @Test
    void rowsAreKeptInTheOrderTheyAreWrittenWhateverTheirConversation() throws Exception {
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            store.write(new StoreBatch().addConversation(new ConversationRecord("b", null, T0))
                    .addConversation(new ConversationRecord("a", null, T0))
                    .addEvent(delta("b", "run-b", 1, T0)).addEvent(delta("b", "run-b", 2, T0)));
            store.write(new StoreBatch().addEvent(delta("a", "run-a", 1, T0)).addEvent(delta("b", "run-b", 3, T0)));
            store.write(new StoreBatch().addEvent(delta("a", "run-a", 2, T0)));
            assertThat(store.events("a", 0, 10)).extracting(Envelope::seq).containsExactly(1L, 2L);
            assertThat(store.events("b", 0, 10)).extracting(Envelope::seq).containsExactly(1L, 2L, 3L);
        }
        Path file = dir.resolve(SqliteConversationStore.FILE_NAME);
        assertThat(query(file, "SELECT c.id || ' ' || e.seq FROM events e JOIN conversations c ON c.key = e.conversation_key"
                + " ORDER BY e.rowid"))
                .containsExactly("b 1", "a 1", "b 3", "a 2");
        assertThat(query(file, "SELECT sql FROM sqlite_schema WHERE name = 'events'")).singleElement()
                .asString().doesNotContainIgnoringCase("WITHOUT ROWID");
        assertThat(query(file, "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'events'"))
                .contains("events_by_seq", "run_bounds");
    }

    @Test
    void aSegmentWhoseEventsDoNotMatchItsSeqsIsReportedUnreadable() throws Exception {
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            store.write(batchOf(1, 3).addConversation(new ConversationRecord(CONV, null, T0)));
        }
        Path file = dir.resolve(SqliteConversationStore.FILE_NAME);
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement s = c.createStatement()) {
            s.execute("UPDATE events SET last_seq = 4 WHERE seq = 1");
        }
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            assertThatThrownBy(() -> store.events(CONV, 0, 10)).hasMessageContaining("seq 1 of conversation " + CONV)
                    .hasMessageContaining("unreadable");
        }
    }

    @Test
    void aDeltaThatContinuesTheEventBeforeItIsKeptAsItsDeltaAloneAndReadBackWhole() throws Exception {
        List<Envelope> written = List.of(
                event(1, T0, new Event.MessageStarted("m1", Role.ASSISTANT)),
                event(2, T0, new Event.TextDelta("m1", "He said \"hi\"\n")),
                event(3, T0 + 4, new Event.TextDelta("m1", "✓ \u0001\\")),
                event(4, T0 + 2, new Event.TextDelta("m2", "other")),
                event(5, T0 + 5, new Event.TextDelta("m2", "message")),
                event(6, T0 + 5, new Event.ReasoningDelta("m2", "think")),
                event(7, T0 + 6, new Event.ReasoningDelta("m2", "ing")),
                event(8, T0 + 6, new Event.ToolCallStarted("t1", "search", "m2")),
                event(9, T0 + 7, new Event.ToolCallArgs("t1", "{\"q\":")),
                event(10, T0 + 7, new Event.ToolCallArgs("t1", "")),
                event(11, T0 + 8, new Event.ToolCallArgs("t1", "1}")),
                event(12, T0 + 8, new Event.ToolCallArgs("t2", "{}")),
                event(13, T0 + 9, new Event.TextDelta("m2", "again")));
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            StoreBatch batch = new StoreBatch().addConversation(new ConversationRecord(CONV, null, T0));
            written.forEach(e -> batch.addEvent(e, store.prepare(e)));
            store.write(batch);
            for (int after = 0; after <= written.size(); after++) {
                assertThat(store.events(CONV, after, 100)).as("after %d", after)
                        .isEqualTo(written.subList(after, written.size()));
                assertThat(store.events(CONV, after, 1)).as("after %d, at most one", after)
                        .isEqualTo(written.subList(after, Math.min(written.size(), after + 1)));
            }
        }
        assertThat(rows(CONV)).containsExactly("1-13 SEGMENT");
        assertThat(query(dir.resolve(SqliteConversationStore.FILE_NAME), "SELECT payload FROM events")).containsExactly(
                "[0,{\"type\":\"message_started\",\"messageId\":\"m1\",\"role\":\"assistant\"}"
                        + ",0,{\"type\":\"text_delta\",\"messageId\":\"m1\",\"delta\":\"He said \\\"hi\\\"\\n\"}"
                        + ",4,\"✓ \\u0001\\\\\""
                        + ",2,{\"type\":\"text_delta\",\"messageId\":\"m2\",\"delta\":\"other\"},5,\"message\""
                        + ",5,{\"type\":\"reasoning_delta\",\"messageId\":\"m2\",\"delta\":\"think\"},6,\"ing\""
                        + ",6," + EventCodec.toJson(written.get(7).event())
                        + ",7,{\"type\":\"tool_call_args\",\"toolCallId\":\"t1\",\"delta\":\"{\\\"q\\\":\"},7,\"\",8,\"1}\""
                        + ",8,{\"type\":\"tool_call_args\",\"toolCallId\":\"t2\",\"delta\":\"{}\"}"
                        + ",9,{\"type\":\"text_delta\",\"messageId\":\"m2\",\"delta\":\"again\"}]");
    }

    @Test
    void aSegmentsPayloadIsStoredAsTextWhateverItsCharacters() throws Exception {
        List<Envelope> written = List.of(
                event(1, T0, new Event.MessageStarted("m1", Role.ASSISTANT)),
                event(2, T0, new Event.TextDelta("m1", "caf\u00e9 \u20ac")),
                event(3, T0 + 1, new Event.TextDelta("m1", " \ud83d\ude42 \u4e2d\u6587")),
                event(4, T0 + 2, new Event.TextDelta("m1", "plain")),
                event(5, T0 + 3, new Event.RunFinished()));
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            StoreBatch batch = new StoreBatch().addConversation(new ConversationRecord(CONV, null, T0));
            written.forEach(e -> batch.addEvent(e, store.prepare(e)));
            store.write(batch);
            assertThat(store.events(CONV, 0, 100)).isEqualTo(written);
        }
        assertThat(rows(CONV)).containsExactly("1-5 RUN_FINISHED");
        Path file = dir.resolve(SqliteConversationStore.FILE_NAME);
        assertThat(query(file, "SELECT typeof(payload) FROM events")).containsExactly("text");
        String end = ",3," + EventCodec.toJson(new Event.RunFinished());
        assertThat(query(file, "SELECT payload FROM events WHERE last_seq IS NOT NULL")).containsExactly(
                "[0,{\"type\":\"message_started\",\"messageId\":\"m1\",\"role\":\"assistant\"}"
                        + ",0,{\"type\":\"text_delta\",\"messageId\":\"m1\",\"delta\":\"caf\u00e9 \u20ac\"}"
                        + ",1,\" \ud83d\ude42 \u4e2d\u6587\",2,\"plain\"" + end + "]");
        // 144 characters up to the end's, of which the emoji is one (two chars in Java, four bytes in UTF-8).
        assertThat(query(file, "SELECT length(payload) FROM events WHERE last_seq IS NOT NULL"))
                .as("characters, not bytes: SQLite reads it as text").containsExactly(String.valueOf(144 + end.length()));
    }

    @Test
    void aSegmentOfObjectsOnlyAsVersionSixWroteItReadsAsBefore() throws Exception {
        List<Envelope> written = List.of(
                event(1, T0, new Event.MessageStarted("m1", Role.ASSISTANT)),
                event(2, T0 + 1, new Event.TextDelta("m1", "one")),
                event(3, T0 + 2, new Event.TextDelta("m1", "two")));
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            StoreBatch batch = new StoreBatch().addConversation(new ConversationRecord(CONV, null, T0));
            written.forEach(batch::addEvent);
            store.write(batch);
        }
        String objectsOnly = "[0," + EventCodec.toJson(written.get(0).event()) + ",1," + EventCodec.toJson(written.get(1).event())
                + ",2," + EventCodec.toJson(written.get(2).event()) + "]";
        setPayload(objectsOnly);
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            assertThat(store.events(CONV, 0, 10)).isEqualTo(written);
            assertThat(store.events(CONV, 2, 10)).isEqualTo(written.subList(2, 3));
        }
    }

    @Test
    void aDeltaAloneThatFollowsNoDeltaOrIsRefusedByItsKindIsReportedUnreadable() throws Exception {
        try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
            store.write(batchOf(1, 3).addConversation(new ConversationRecord(CONV, null, T0)));
        }
        String started = EventCodec.toJson(new Event.MessageStarted("m1", Role.ASSISTANT));
        String delta = EventCodec.toJson(new Event.TextDelta("m1", "a"));
        for (String payload : List.of("[0,\"a\",1,\"b\",2,\"c\"]", "[0," + started + ",1,\"b\",2,\"c\"]",
                "[0," + delta + ",1,\"\",2,\"c\"]")) {
            setPayload(payload);
            try (SqliteConversationStore store = SqliteConversationStore.open(dir)) {
                assertThatThrownBy(() -> store.events(CONV, 0, 10)).as(payload)
                        .hasMessageContaining("seq 1 of conversation " + CONV).hasMessageContaining("unreadable")
                        .hasMessageContaining(payload.contains("\"\"") ? "is refused" : "follows no delta");
            }
        }
    }

    /** Sets the payload of the conversation's one row, as a file another build wrote may hold it. */
    private void setPayload(String payload) throws SQLException {
        Path file = dir.resolve(SqliteConversationStore.FILE_NAME);
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
             PreparedStatement update = c.prepareStatement("UPDATE events SET payload = ?"
                     + " WHERE conversation_key = (SELECT key FROM conversations WHERE id = ?)")) {
            update.setString(1, payload);
            update.setString(2, CONV);
            assertThat(update.executeUpdate()).isEqualTo(1);
        }
    }

    private static void assertRefused(SqliteConversationStore store, long from, long to) {
        long before = store.lastEventSeq(CONV);
        assertThatThrownBy(() -> store.write(batchOf(from, to)))
                .as("seqs %d to %d", from, to)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("seq " + from + " of conversation " + CONV + " is already stored");
        assertThat(store.lastEventSeq(CONV)).isEqualTo(before);
    }

    private static StoreBatch batchOf(long from, long to) {
        StoreBatch batch = new StoreBatch();
        for (long seq = from; seq <= to; seq++) {
            batch.addEvent(delta(CONV, "run-1", seq, T0 + seq));
        }
        return batch;
    }

    private static Envelope delta(String conversationId, String runId, long seq, long ts) {
        return new Envelope(conversationId, runId, seq, ts, new Event.TextDelta("m1", "part \"" + seq + "\" ✓"));
    }

    private static Envelope event(long seq, long ts, Event event) {
        return new Envelope(CONV, "run-1", seq, ts, event);
    }

    private static Envelope text(long seq, String text) {
        return new Envelope(CONV, "run-2", seq, T0, new Event.TextDelta("m1", text));
    }

    /** The conversation's rows as "seq-last_seq kind", in seq order. */
    private List<String> rows(String conversationId) throws SQLException {
        Path file = dir.resolve(SqliteConversationStore.FILE_NAME);
        List<String> rows = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
             PreparedStatement q = c.prepareStatement(
                     "SELECT seq, last_seq, kind FROM events"
                             + " WHERE conversation_key = (SELECT key FROM conversations WHERE id = ?) ORDER BY seq")) {
            q.setString(1, conversationId);
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    rows.add(rs.getLong(1) + "-" + rs.getString(2) + " " + rs.getString(3));
                }
            }
        }
        return rows;
    }
}
