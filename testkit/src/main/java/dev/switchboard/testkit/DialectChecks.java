package dev.switchboard.testkit;

import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.WireAdapterProvider;

import java.io.IOException;
import java.util.List;
import java.util.ServiceLoader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/** Checks every dialect module must pass: its provider is found, and its decoder takes any text. */
public final class DialectChecks {
    private DialectChecks() {
    }

    /**
     * Checks that {@link ServiceLoader} finds exactly one provider with this id, that it is of this
     * class, and that the adapter it creates has the id too.
     */
    public static void assertProvided(String id, Class<? extends WireAdapterProvider> type) {
        List<WireAdapterProvider> found = ServiceLoader.load(WireAdapterProvider.class).stream()
                .map(ServiceLoader.Provider::get)
                .filter(p -> p.id().equals(id))
                .toList();
        assertEquals(1, found.size(), () -> "providers with the id " + id + ": " + found);
        assertInstanceOf(type, found.get(0));
        assertEquals(id, found.get(0).create(AdapterContext.defaults()).id());
    }

    /**
     * Decodes text a client sent, as a fuzz test does: the result is commands or a typed failure,
     * never an exception or null, and a failure encodes as exactly one JSON frame.
     */
    public static Decoded assertDecodesToCommandsOrATypedFailure(DialectSession session, String text)
            throws IOException {
        Decoded decoded = session.decode(text);
        assertNotNull(decoded);
        if (decoded instanceof Decoded.Failure f) {
            CollectingFrameWriter out = new CollectingFrameWriter();
            session.encodeError(f.error(), out);
            assertEquals(1, out.json().size(), () -> "frames for " + f.error() + ": " + out.frames());
        }
        return decoded;
    }

    /**
     * Checks that a message of an unknown, very long {@code type} gets UNKNOWN_TYPE with the type
     * echoed cut to 64 characters (code points) and a {@code …}.
     */
    public static void assertLongUnknownTypeIsShortenedWhenEchoed(DialectSession session) {
        Decoded decoded = session.decode("{\"type\":\"" + "\uD83D\uDE00".repeat(1000) + "\"}");
        GatewayError error = assertInstanceOf(Decoded.Failure.class, decoded).error();
        assertEquals(ErrorCode.UNKNOWN_TYPE, error.code());
        assertEquals("\uD83D\uDE00".repeat(64) + "…", error.details().get("type"));
    }
}
