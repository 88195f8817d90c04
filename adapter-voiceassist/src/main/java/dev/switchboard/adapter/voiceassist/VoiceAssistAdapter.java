package dev.switchboard.adapter.voiceassist;

import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Cursors;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.JsonInput;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.spi.WireAdapter;

import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The VoiceAssist dialect (specs/voiceassist-protocol.md) on {@code /api/realtime/ws}, where the
 * URL's {@code conversationId} names the conversation a connection belongs to.
 */
public final class VoiceAssistAdapter implements WireAdapter {
    static final String ID = "voiceassist";
    static final String CONVERSATION_ID = "conversationId";

    private final AdapterContext context;

    public VoiceAssistAdapter(AdapterContext context) {
        this.context = Objects.requireNonNull(context, "context");
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public Set<String> webSocketPaths() {
        return Set.of("/api/realtime/ws");
    }

    /** VoiceAssist has no message for approval requests, so they are routed to other connections. */
    @Override
    public boolean answersApprovals() {
        return false;
    }

    /**
     * Refuses an upgrade whose {@code conversationId} query parameter is missing, blank or too
     * long, as well as a malformed cursor.
     */
    @Override
    public GatewayError refuseUpgrade(SessionContext session) {
        GatewayError cursor = WireAdapter.super.refuseUpgrade(session);
        if (cursor != null) {
            return cursor;
        }
        Optional<String> id = session.queryParam(CONVERSATION_ID);
        if (id.isEmpty() || JsonInput.blank(id.get())) {
            return GatewayError.field(ErrorCode.MISSING_FIELD, CONVERSATION_ID,
                    "the query parameter conversationId is required: connect to /api/realtime/ws?conversationId=<id>");
        }
        if (JsonInput.codePoints(id.get()) > VoiceAssistDecoder.MAX_ID_CHARS) {
            return GatewayError.field(ErrorCode.INVALID_FIELD, CONVERSATION_ID,
                    "the query parameter conversationId must be at most " + VoiceAssistDecoder.MAX_ID_CHARS
                            + " characters");
        }
        return null;
    }

    @Override
    public Cursors.Style cursorStyle() {
        return Cursors.Style.FIELD;
    }

    @Override
    public DialectSession newSession(SessionContext session) {
        String conversationId = refuseUpgrade(session) == null ? session.queryParam(CONVERSATION_ID).get() : null;
        return new VoiceAssistSession(session.connectionId(), conversationId,
                Cursors.lastSeq(session).orElse(null), context.maxContentChars(), System::currentTimeMillis);
    }
}
