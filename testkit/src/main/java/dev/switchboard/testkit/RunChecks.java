package dev.switchboard.testkit;

import dev.switchboard.core.Command;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Role;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Checks of the commands a chat dialect's decoder makes of what a person types. */
public final class RunChecks {
    private RunChecks() {
    }

    /**
     * Checks a run started by one message a person typed, in a dialect that sends no history,
     * tools, context or state: a new run id ({@code run_…}) with no parent, and one user message
     * with a new id ({@code msg_…}), this content and no tool calls.
     */
    public static void assertOneUserMessageRun(Command.StartRun run, String content) {
        assertTrue(run.runId().startsWith("run_"), () -> "run id " + run.runId());
        assertNull(run.parentRunId(), "parent run");
        assertEquals(1, run.messages().size(), () -> "messages " + run.messages());
        InputMessage m = run.messages().get(0);
        assertTrue(m.id().startsWith("msg_"), () -> "message id " + m.id());
        assertEquals(Role.USER, m.role());
        assertEquals(content, m.content());
        assertTrue(m.toolCalls().isEmpty(), () -> "tool calls " + m.toolCalls());
        assertNull(m.toolCallId(), "tool call id");
        assertTrue(run.tools().isEmpty(), () -> "tools " + run.tools());
        assertNull(run.context(), "context");
        assertNull(run.state(), "state");
        assertNull(run.forwardedProps(), "forwarded props");
    }
}
