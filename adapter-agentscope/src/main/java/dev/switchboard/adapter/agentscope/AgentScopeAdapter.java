package dev.switchboard.adapter.agentscope;

import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Cursors;
import dev.switchboard.core.spi.HttpExchange;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.spi.WireAdapter;

import java.util.Objects;
import java.util.Optional;
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
    public boolean answersApprovals() {
        return true;
    }

    /** {@code GET /process/sessions/<id>/events} reattaches to a conversation's stream. */
    @Override
    public Optional<String> reattachConversation(String path) {
        return Cursors.reattachId(path, "/process/sessions/");
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
