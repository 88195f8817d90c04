package dev.switchboard.adapter.agentscope;

import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.HttpExchange;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.spi.WireAdapter;

import java.util.Objects;
import java.util.Set;

/** The AgentScope Agent API dialect on {@code POST /process}; it has no WebSocket transport. */
public final class AgentScopeAdapter implements WireAdapter {
    static final String ID = "agentscope";

    private final AdapterContext context;

    public AgentScopeAdapter(AdapterContext context) {
        this.context = Objects.requireNonNull(context, "context");
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public Set<String> webSocketPaths() {
        return Set.of();
    }

    @Override
    public boolean answersApprovals() {
        return true;
    }

    @Override
    public DialectSession newSession(SessionContext session) {
        throw new UnsupportedOperationException(ID + " serves no WebSocket paths");
    }

    /** {@code GET /process/sessions/<id>/events} reattaches to a conversation's stream. */
    @Override
    public java.util.Optional<String> reattachConversation(String path) {
        String suffix = "/events";
        if (!path.startsWith("/process/sessions/") || !path.endsWith(suffix)) {
            return java.util.Optional.empty();
        }
        String id = path.substring("/process/sessions/".length(), path.length() - suffix.length());
        if (id.isEmpty() || id.contains("/")) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(java.net.URLDecoder.decode(id, java.nio.charset.StandardCharsets.UTF_8));
    }

    @Override
    public Set<String> httpPaths() {
        return Set.of("/process");
    }

    @Override
    public HttpExchange newExchange(SessionContext session) {
        return new AgentScopeExchange(context.maxContentChars(), System::currentTimeMillis);
    }
}
