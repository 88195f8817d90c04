package dev.switchboard.adapter.hai;

import dev.switchboard.core.Command;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.FrameWriter;

import java.io.IOException;
import java.util.List;

/** One HAI connection's translator between HAI messages and the event core. */
final class HaiSession implements DialectSession {
    private final HaiDecoder decoder;
    private final HaiEncoder encoder = new HaiEncoder();
    private final List<Command> opening;

    HaiSession(int maxContentChars, List<Command> opening) {
        this.decoder = new HaiDecoder(maxContentChars);
        this.opening = opening;
    }

    /** The join the URL asks for ({@code ?session_id=...&last_seq=...}), if any. */
    @Override
    public List<Command> openingCommands() {
        return opening;
    }

    @Override
    public Decoded decode(String text) {
        Decoded decoded = decoder.decode(text);
        if (decoded instanceof Decoded.Commands commands) {
            for (Command command : commands.commands()) {
                if (command instanceof Command.StartRun run && HaiDecoder.nonStreaming(run)) {
                    encoder.expectNonStreaming(run.runId());
                }
            }
        }
        return decoded;
    }

    @Override
    public void encode(Envelope envelope, FrameWriter out) throws IOException {
        encoder.encode(envelope, out);
    }

    @Override
    public void encodeError(GatewayError error, FrameWriter out) throws IOException {
        encoder.encodeError(error, out);
    }
}
