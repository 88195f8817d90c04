package dev.switchboard.core;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The gateway's shared Jackson objects and small JSON helpers used by every adapter.
 *
 * <p>Inbound JSON is parsed under {@link #READ_CONSTRAINTS}, so a hostile peer cannot make
 * the parser nest or buffer without bound.
 */
public final class Json {
    /** Limits on what any inbound document may contain. */
    public static final StreamReadConstraints READ_CONSTRAINTS = StreamReadConstraints.builder()
            .maxNestingDepth(64)
            .maxNumberLength(100)
            .maxStringLength(1 << 20)
            .maxDocumentLength(16L << 20)
            .build();

    /** Factory for streaming generators and parsers. */
    public static final JsonFactory FACTORY = JsonFactory.builder()
            .streamReadConstraints(READ_CONSTRAINTS)
            .build();

    /** Mapper for trees and records; thread-safe. */
    public static final ObjectMapper MAPPER = JsonMapper.builder(FACTORY)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    /**
     * Mapper for what the gateway wrote itself (stored events, messages and documents): read
     * without the inbound limits, since a stored value may pass them (a completed message is the
     * sum of its deltas, a tool result is what the tool answered).
     */
    public static final ObjectMapper STORED_MAPPER = JsonMapper.builder(JsonFactory.builder()
                    .streamReadConstraints(StreamReadConstraints.builder()
                            .maxStringLength(Integer.MAX_VALUE)
                            .maxDocumentLength(-1)
                            .build())
                    .build())
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    /** Reads one whole JSON document; text after it is an error. */
    public static final ObjectReader STRICT_READER = MAPPER.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private Json() {
    }

    /**
     * Parses inbound text as exactly one JSON document under {@link #READ_CONSTRAINTS}; empty
     * input gives a missing node, never null. Throws for malformed input, trailing text and
     * documents over the limits.
     */
    public static JsonNode parseStrict(String text) throws JsonProcessingException {
        JsonNode root = STRICT_READER.readTree(text);
        return root == null ? MAPPER.missingNode() : root;
    }

    /** A new empty object node. */
    public static ObjectNode object() {
        return JsonNodeFactory.instance.objectNode();
    }

    /** {@code node} if it is an object, else a new empty object. */
    public static JsonNode objectOrEmpty(JsonNode node) {
        return node != null && node.isObject() ? node : object();
    }

    /** Text of a JSON value for a human: strings unquoted, anything else as compact JSON. */
    public static String text(JsonNode node) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            return "";
        }
        return node.isTextual() ? node.textValue() : node.toString();
    }
}
