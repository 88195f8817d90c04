package dev.switchboard.adapter.hai;

import dev.switchboard.core.Command;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.FrameWriter;

import java.io.IOException;

/** One HAI connection's translator between HAI messages and the event core. */
final class HaiSession implements DialectSession {
    private final HaiDecoder decoder;
    private final HaiEncoder encoder = new HaiEncoder();

    HaiSession(int maxContentChars) {
        this.decoder = new HaiDecoder(maxContentChars);
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
