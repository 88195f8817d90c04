package dev.switchboard.adapter.hai;

import dev.switchboard.core.Principal;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.testkit.EmbeddedSession;

import java.util.Map;

/** A HAI session under test that keeps every frame it writes; its envelopes are stamped 1 ms apart. */
final class HaiTesting extends EmbeddedSession<DialectSession> {
    HaiTesting() {
        this(AdapterContext.defaults());
    }

    HaiTesting(AdapterContext context) {
        super(new HaiAdapter(context).newSession(new SessionContext("conn-1", Principal.ANONYMOUS, "/ws", Map.of())),
                1_700_000_000_000L, 1);
    }
}
