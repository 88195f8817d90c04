package dev.switchboard.core.spi;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.EventCodec;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Json;
import dev.switchboard.core.Role;
import dev.switchboard.core.ToolCallRef;

import java.io.UncheckedIOException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;

/**
 * The rows of a SQL {@link ConversationStore}, as JDBC binds and reads them: the columns of the
 * tables every such store has ({@code messages}, {@code events}, {@code approvals}), in the order
 * each method names, and the query of the runs crash recovery fails.
 */
public final class StoredRows {
    /** The kinds a run-bounds index holds; a query uses a partial index only when it names this very term. */
    public static final String RUN_BOUNDS = "kind IN ('RUN_STARTED', 'RUN_FINISHED', 'RUN_FAILED')";

    /**
     * The runs started and not ended ({@link ConversationStore#unfinishedRuns()}), with the columns
     * {@link #runStarts} reads.
     */
    public static final String UNFINISHED_RUNS =
            "SELECT s.conversation_id, s.seq, s.run_id, s.ts, s.payload FROM events s"
                    + " WHERE s." + RUN_BOUNDS + " AND s.kind = 'RUN_STARTED' AND NOT EXISTS (SELECT 1 FROM events t"
                    + " WHERE t." + RUN_BOUNDS + " AND t.kind IN ('RUN_FINISHED', 'RUN_FAILED')"
                    + " AND t.conversation_id = s.conversation_id AND t.run_id = s.run_id)";

    private StoredRows() {
    }

    /**
     * Binds a message as parameters 1 to 9: conversation_id, id, run_id, role, content, tool_calls
     * (JSON, null for none), tool_call_id, name, created_at.
     */
    public static void bindMessage(PreparedStatement s, StoreBatch.MessageRow row) throws SQLException {
        InputMessage m = row.message();
        s.setString(1, row.conversationId());
        s.setString(2, m.id());
        s.setString(3, row.runId());
        s.setString(4, m.role().wireName());
        s.setString(5, m.content());
        s.setString(6, toolCallsJson(m.toolCalls()));
        s.setString(7, m.toolCallId());
        s.setString(8, m.name());
        s.setLong(9, row.createdAt());
    }

    /**
     * Binds the batch's {@code i}-th event as parameters 1 to 6: conversation_id, seq, run_id, ts,
     * kind, payload (its JSON, as {@link ConversationStore#prepare} made it when it did).
     */
    public static void bindEvent(PreparedStatement s, StoreBatch batch, int i) throws SQLException {
        Envelope e = batch.events().get(i);
        s.setString(1, e.conversationId());
        s.setLong(2, e.seq());
        s.setString(3, e.runId());
        s.setLong(4, e.timestamp());
        s.setString(5, e.event().kind().name());
        s.setString(6, batch.prepared(i) instanceof String json ? json : EventCodec.toJson(e.event()));
    }

    /**
     * Binds an approval as parameters 1 to 9: id, conversation_id, run_id, seq, request (JSON),
     * status, feedback, decided_by, decided_at.
     */
    public static void bindApproval(PreparedStatement s, ApprovalRecord a) throws SQLException {
        s.setString(1, a.approvalId());
        s.setString(2, a.conversationId());
        s.setString(3, a.runId());
        s.setLong(4, a.seq());
        s.setString(5, EventCodec.toJson(a.request()));
        s.setString(6, a.status().name());
        s.setString(7, a.feedback());
        s.setString(8, a.decidedBy());
        if (a.decidedAt() == null) {
            s.setNull(9, Types.BIGINT);
        } else {
            s.setLong(9, a.decidedAt());
        }
    }

    /** A conversation's events from rows of seq, run_id, ts, payload. */
    public static List<Envelope> events(String conversationId, ResultSet rs) throws SQLException {
        List<Envelope> out = new ArrayList<>();
        while (rs.next()) {
            out.add(new Envelope(conversationId, rs.getString(2), rs.getLong(1), rs.getLong(3),
                    EventCodec.fromJson(rs.getString(4))));
        }
        return out;
    }

    /** Events of any conversation from the rows of {@link #UNFINISHED_RUNS}: conversation_id, seq, run_id, ts, payload. */
    public static List<Envelope> runStarts(ResultSet rs) throws SQLException {
        List<Envelope> out = new ArrayList<>();
        while (rs.next()) {
            out.add(new Envelope(rs.getString(1), rs.getString(3), rs.getLong(2), rs.getLong(4),
                    EventCodec.fromJson(rs.getString(5))));
        }
        return out;
    }

    /** Messages from rows of id, role, content, tool_calls, tool_call_id, name. */
    public static List<InputMessage> messages(ResultSet rs) throws SQLException {
        List<InputMessage> out = new ArrayList<>();
        while (rs.next()) {
            String role = rs.getString(2);
            out.add(new InputMessage(rs.getString(1),
                    Role.fromWire(role).orElseThrow(
                            () -> new IllegalStateException("stored message has unknown role " + role)),
                    rs.getString(3), toolCalls(rs.getString(4)), rs.getString(5), rs.getString(6)));
        }
        return out;
    }

    /**
     * Approvals from rows of conversation_id, run_id, seq, request, status, feedback, decided_by,
     * decided_at.
     */
    public static List<ApprovalRecord> approvals(ResultSet rs) throws SQLException {
        List<ApprovalRecord> out = new ArrayList<>();
        while (rs.next()) {
            long decidedAt = rs.getLong(8);
            Long decided = rs.wasNull() ? null : decidedAt;
            out.add(new ApprovalRecord(rs.getString(1), rs.getString(2), rs.getLong(3),
                    (Event.ApprovalRequested) EventCodec.fromJson(rs.getString(4)),
                    ApprovalRecord.Status.valueOf(rs.getString(5)), rs.getString(6), rs.getString(7), decided));
        }
        return out;
    }

    private static String toolCallsJson(List<ToolCallRef> calls) {
        if (calls.isEmpty()) {
            return null;
        }
        ArrayNode array = Json.MAPPER.createArrayNode();
        for (ToolCallRef call : calls) {
            array.addObject().put("id", call.id()).put("name", call.name()).put("arguments", call.arguments());
        }
        return array.toString();
    }

    private static List<ToolCallRef> toolCalls(String json) {
        if (json == null) {
            return List.of();
        }
        try {
            List<ToolCallRef> out = new ArrayList<>();
            for (JsonNode call : Json.STORED_MAPPER.readTree(json)) {
                out.add(new ToolCallRef(call.path("id").textValue(), call.path("name").textValue(),
                        call.path("arguments").textValue()));
            }
            return out;
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException("stored tool calls are unreadable: " + e.getOriginalMessage(), e);
        }
    }
}
