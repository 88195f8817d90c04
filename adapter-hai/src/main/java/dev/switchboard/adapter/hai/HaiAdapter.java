package dev.switchboard.adapter.hai;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Cursors;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.Probe;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.spi.WireAdapter;

import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The HAI dialect (specs/hai-protocol.md) on {@code /ws} and {@code /hai/ws}; it takes
 * {@code /ws} connections that no other dialect claims.
 */
public final class HaiAdapter implements WireAdapter {
    static final String ID = "hai";

    /** The URL query parameter naming the conversation a connection joins at once. */
    static final String CONVERSATION_PARAMETER = "session_id";

    private final AdapterContext context;

    public HaiAdapter(AdapterContext context) {
        this.context = Objects.requireNonNull(context, "context");
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public Set<String> webSocketPaths() {
        return Set.of("/ws", "/hai/ws");
    }

    @Override
    public Set<String> subprotocols() {
        return Set.of(ID);
    }

    @Override
    public boolean fallback() {
        return true;
    }

    /** Matches a first frame that is a JSON object whose {@code type} is a client-to-server HAI type. */
    @Override
    public Probe probe(String firstFrame) {
        if (firstFrame == null) {
            return Probe.NO_MATCH;
        }
        JsonNode root;
        try {
            root = HaiDecoder.parse(firstFrame);
        } catch (JsonProcessingException e) {
            return Probe.NO_MATCH;
        }
        String type = root.path("type").textValue();
        return HaiDecoder.USER_MESSAGE.equals(type) || HaiDecoder.TOOL_APPROVAL_RESPONSE.equals(type)
                ? Probe.MATCH
                : Probe.NO_MATCH;
    }

    @Override
    public Optional<String> conversationParameter() {
        return Optional.of(CONVERSATION_PARAMETER);
    }

    @Override
    public boolean answersApprovals() {
        return true;
    }

    @Override
    public Cursors.Style cursorStyle() {
        return Cursors.Style.FIELD;
    }

    @Override
    public DialectSession newSession(SessionContext session) {
        return new HaiSession(context.maxContentChars(), Cursors.openingJoin(session, CONVERSATION_PARAMETER));
    }
}
