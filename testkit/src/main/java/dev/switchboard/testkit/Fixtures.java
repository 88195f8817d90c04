package dev.switchboard.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** Spec examples kept as test resources under {@code /fixtures/}, and JSON written in a test. */
public final class Fixtures {
    private Fixtures() {
    }

    /** The text of {@code /fixtures/<name>} on the test class path. */
    public static String fixture(String name) {
        try (InputStream in = Fixtures.class.getResourceAsStream("/fixtures/" + name)) {
            if (in == null) {
                throw new IllegalArgumentException("no fixture " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code /fixtures/<name>}, parsed. */
    public static JsonNode fixtureJson(String name) {
        return json(fixture(name));
    }

    /** Parses JSON a test wrote, failing the test's set-up (not an assertion) when it is not JSON. */
    public static JsonNode json(String text) {
        try {
            return Json.MAPPER.readTree(text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
