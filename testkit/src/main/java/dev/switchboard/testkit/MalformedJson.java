package dev.switchboard.testkit;

import com.fasterxml.jackson.databind.node.TextNode;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.spi.Decoded;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.params.provider.Arguments;

import java.util.function.Function;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * Tables of text that is not one JSON object, which every JSON dialect's decoder must refuse with
 * INVALID_JSON. They run as a {@code @TestFactory} ({@link #refusedBy}) or give their rows
 * {@code (name, text)} to a {@code @MethodSource}; each table is made from a valid input of the
 * dialect's, so that only the framing is wrong.
 */
public final class MalformedJson {
    private MalformedJson() {
    }

    /** Text that does not parse as one JSON document; {@code validObject} is a JSON object written on one line. */
    public static Stream<Arguments> notJson(String validObject) {
        if (!validObject.startsWith("{") || !validObject.endsWith("}")) {
            throw new IllegalArgumentException("not a JSON object: " + validObject);
        }
        String open = validObject.substring(0, validObject.length() - 1);
        return Stream.of(
                Arguments.of("plain text", "hello"),
                Arguments.of("an empty frame", ""),
                Arguments.of("only white space", "   "),
                Arguments.of("a truncated object", open + ","),
                Arguments.of("an unclosed object", open),
                Arguments.of("single quotes", validObject.replace('"', '\'')),
                Arguments.of("an object followed by garbage", validObject + " trailing"),
                Arguments.of("two objects", validObject + validObject),
                Arguments.of("nesting deeper than the read constraints", "[".repeat(65) + "]".repeat(65)),
                Arguments.of("unclosed nesting deeper than the read constraints", "[".repeat(200)),
                Arguments.of("a number longer than the read constraints", open + ",\"n\":" + "9".repeat(101) + "}"));
    }

    /** JSON documents that are not an object. */
    public static Stream<Arguments> notObjects(String validObject) {
        return Stream.of(
                Arguments.of("an array of the object", "[" + validObject + "]"),
                Arguments.of("the object encoded again as a string", TextNode.valueOf(validObject).toString()),
                Arguments.of("a number", "42"),
                Arguments.of("a boolean", "true"),
                Arguments.of("null", "null"));
    }

    /**
     * One test a row of both tables, each checking that the decoder refuses the text with
     * INVALID_JSON, and a JSON document that is not an object with exactly {@code notObjectMessage}.
     */
    public static Stream<DynamicTest> refusedBy(String validObject, String notObjectMessage,
                                                Function<String, Decoded> decoder) {
        return Stream.concat(notJson(validObject).map(row -> refused(row, decoder, null)),
                notObjects(validObject).map(row -> refused(row, decoder, notObjectMessage)));
    }

    /** A test that the decoder refuses the row's text with INVALID_JSON, and this message unless it is null. */
    private static DynamicTest refused(Arguments row, Function<String, Decoded> decoder, String message) {
        String text = (String) row.get()[1];
        return DynamicTest.dynamicTest((String) row.get()[0], () -> {
            GatewayError error = assertInstanceOf(Decoded.Failure.class, decoder.apply(text)).error();
            assertEquals(ErrorCode.INVALID_JSON, error.code(), () -> "code of " + error);
            if (message != null) {
                assertEquals(message, error.message());
            }
        });
    }
}
