package com.example.jsonl;

import dev.switchboard.core.spi.Cursors;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.spi.WireAdapter;

import java.util.Set;

/** The JSON Lines dialect: one JSON object a WebSocket message each way, on one path of its own. */
final class JsonlAdapter implements WireAdapter {
    private final String path;
    private final int maxContentChars;

    JsonlAdapter(String path, int maxContentChars) {
        this.path = path;
        this.maxContentChars = maxContentChars;
    }

    @Override
    public String id() {
        return "jsonl";
    }

    @Override
    public Set<String> webSocketPaths() {
        return Set.of(path);
    }

    @Override
    public boolean answersApprovals() {
        return true;
    }

    /** The gateway adds each event's {@code seq} to its last frame: the cursor a client resumes from. */
    @Override
    public Cursors.Style cursorStyle() {
        return Cursors.Style.FIELD;
    }

    @Override
    public DialectSession newSession(SessionContext context) {
        return new JsonlSession(maxContentChars);
    }
}
