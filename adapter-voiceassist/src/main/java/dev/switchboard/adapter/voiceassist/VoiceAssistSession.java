package dev.switchboard.adapter.voiceassist;

import dev.switchboard.core.Command;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.FrameWriter;

import java.io.IOException;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * One VoiceAssist connection's translator: {@code connected} first, then {@code message} and
 * {@code ping} in, streamed answers, errors and pongs out.
 */
final class VoiceAssistSession implements DialectSession {
    private final String clientId;
    private final String conversationId;
    private final Long lastSeq;
    private final LongSupplier clock;
    private final VoiceAssistDecoder decoder;
    private final VoiceAssistEncoder encoder = new VoiceAssistEncoder();

    /**
     * @param conversationId the conversation the URL names, which the connection joins when it
     *                       opens; null when the URL named none (then every message names one)
     */
    VoiceAssistSession(String clientId, String conversationId, int maxContentChars, LongSupplier clock) {
        this(clientId, conversationId, null, maxContentChars, clock);
    }

    /** @param lastSeq the resume cursor the URL gives ({@code last_seq}), or null */
    VoiceAssistSession(String clientId, String conversationId, Long lastSeq, int maxContentChars, LongSupplier clock) {
        this.lastSeq = lastSeq;
        this.clientId = clientId;
        this.conversationId = conversationId;
        this.clock = clock;
        this.decoder = new VoiceAssistDecoder(maxContentChars, conversationId);
    }

    @Override
    public void opened(FrameWriter out) throws IOException {
        encoder.connected(clientId, clock.getAsLong(), out);
    }

    /**
     * Joins the URL's conversation: from the cursor when the URL gives {@code last_seq}, else as
     * a person does (the active run from its start, then live events).
     */
    @Override
    public List<Command> openingCommands() {
        if (conversationId == null) {
            return List.of();
        }
        return List.of(lastSeq == null ? Command.Subscribe.live(conversationId)
                : new Command.Subscribe(conversationId, lastSeq, false));
    }

    @Override
    public Decoded decode(String text) {
        return decoder.decode(text);
    }

    @Override
    public void encode(Envelope envelope, FrameWriter out) throws IOException {
        encoder.encode(envelope, out);
    }

    @Override
    public void encodeError(GatewayError error, FrameWriter out) throws IOException {
        encoder.encodeError(error, clock.getAsLong(), out);
    }

    @Override
    public void pong(FrameWriter out) throws IOException {
        encoder.pong(clock.getAsLong(), out);
    }
}
