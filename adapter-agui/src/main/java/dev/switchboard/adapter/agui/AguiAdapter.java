package dev.switchboard.adapter.agui;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Cursors;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.HttpExchange;
import dev.switchboard.core.spi.Probe;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.spi.WireAdapter;

import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The AG-UI dialect: the AGORA WebSocket profile on {@code /ws} and {@code /agui/ws}, and the
 * official 1.0 HTTP transport on {@code POST /agui}.
 */
public final class AguiAdapter implements WireAdapter {
    static final String ID = "agui";

    /** The URL query parameter naming the conversation a connection joins at once. */
    static final String CONVERSATION_PARAMETER = "threadId";

    private final AdapterContext context;

    public AguiAdapter(AdapterContext context) {
        this.context = Objects.requireNonNull(context, "context");
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public Set<String> webSocketPaths() {
        return Set.of("/ws", "/agui/ws");
    }

    @Override
    public Set<String> subprotocols() {
        return Set.of("ag-ui");
    }

    /**
     * Matches a first frame that is a JSON object with a {@code threadId} or {@code messages}
     * (a run input), or an {@code agora:tool_approval_response} custom event.
     */
    @Override
    public Probe probe(String firstFrame) {
        if (firstFrame == null) {
            return Probe.NO_MATCH;
        }
        try {
            JsonNode root = AguiDecoder.parse(firstFrame);
            return AguiDecoder.looksLikeAgui(root) ? Probe.MATCH : Probe.NO_MATCH;
        } catch (Exception e) {
            return Probe.NO_MATCH;
        }
    }

    @Override
    public Optional<String> conversationParameter() {
        return Optional.of(CONVERSATION_PARAMETER);
    }

    @Override
    public boolean answersApprovals() {
        return true;
    }

    /** In {@code metadata}: the official client drops unknown top-level fields. */
    @Override
    public Cursors.Style cursorStyle() {
        return Cursors.Style.METADATA;
    }

    @Override
    public DialectSession newSession(SessionContext session) {
        return new AguiWsSession(context.maxContentChars(), System::currentTimeMillis,
                Cursors.openingJoin(session, CONVERSATION_PARAMETER));
    }

    /** {@code GET /agui/threads/<id>/events} reattaches to a conversation's stream. */
    @Override
    public Optional<String> reattachConversation(String path) {
        return Cursors.reattachId(path, "/agui/threads/");
    }

    @Override
    public Set<String> httpPaths() {
        return Set.of("/agui");
    }

    @Override
    public HttpExchange newExchange(SessionContext session) {
        return new AguiHttpExchange(context.maxContentChars(), System::currentTimeMillis);
    }
}
