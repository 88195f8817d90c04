package dev.switchboard.core.spi;

import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * How a WebSocket client names a conversation and a resume cursor in its URL, for every
 * dialect alike: {@code ?<conversation param>=<id>&last_seq=<n>} joins the conversation at
 * once and replays every stored event after {@code n}; without {@code last_seq} the
 * connection joins as a person does (the active run from its start, then live events).
 */
public final class Cursors {
    /** The query parameter of the resume cursor: the last {@code seq} the client holds. */
    public static final String LAST_SEQ = "last_seq";

    /** Where a dialect carries each event's {@code seq} on the frames it sends. */
    public enum Style {
        /** Not carried. */
        NONE,
        /** A top-level {@code "seq"} field, for dialects whose clients ignore unknown fields. */
        FIELD,
        /** {@code "metadata": {"seq": n}}, for clients that drop unknown top-level fields (AG-UI). */
        METADATA
    }

    private Cursors() {
    }

    /** The cursor the URL gives, if any (a malformed one is refused by {@link #refusal}). */
    public static Optional<Long> lastSeq(SessionContext ctx) {
        return ctx.queryParam(LAST_SEQ).flatMap(v -> {
            try {
                long n = Long.parseLong(v.strip());
                return n >= 0 ? Optional.of(n) : Optional.empty();
            } catch (NumberFormatException e) {
                return Optional.empty();
            }
        });
    }

    /** The upgrade's error when its {@code last_seq} is not a non-negative integer; else null. */
    public static GatewayError refusal(SessionContext ctx) {
        if (ctx.queryParam(LAST_SEQ).isPresent() && lastSeq(ctx).isEmpty()) {
            return GatewayError.field(ErrorCode.INVALID_FIELD, LAST_SEQ,
                    "the query parameter last_seq must be a non-negative integer: the seq of the last event received");
        }
        return null;
    }

    /**
     * The conversation id of a reattach path {@code <prefix><id>/events} (URL-decoded), if
     * {@code path} is one.
     */
    public static Optional<String> reattachId(String path, String prefix) {
        String suffix = "/events";
        if (!path.startsWith(prefix) || !path.endsWith(suffix) || path.length() <= prefix.length() + suffix.length()) {
            return Optional.empty();
        }
        String id = path.substring(prefix.length(), path.length() - suffix.length());
        return id.contains("/") ? Optional.empty()
                : Optional.of(URLDecoder.decode(id, StandardCharsets.UTF_8));
    }

    /** The join a connection's URL asks for: none without the conversation parameter. */
    public static List<Command> openingJoin(SessionContext ctx, String conversationParam) {
        Optional<String> conversation = ctx.queryParam(conversationParam).filter(c -> !c.isBlank());
        if (conversation.isEmpty()) {
            return List.of();
        }
        Optional<Long> after = lastSeq(ctx);
        return List.of(after.isPresent()
                ? new Command.Subscribe(conversation.get(), after.get(), false)
                : Command.Subscribe.live(conversation.get()));
    }
}
