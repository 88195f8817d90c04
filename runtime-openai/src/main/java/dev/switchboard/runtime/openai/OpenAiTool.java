package dev.switchboard.runtime.openai;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import dev.switchboard.core.RiskLevel;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A server tool from the {@code tools} option: what the model is told (name, description, JSON-schema
 * parameters) and the HTTP endpoint that runs it, which receives the arguments as a JSON body and
 * answers the result as its body.
 */
record OpenAiTool(String name, String description, JsonNode parameters, URI url, String method,
                  Map<String, String> headers, Duration timeout, RiskLevel risk) {

    /** The function names the Chat Completions API accepts. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final Set<String> METHODS = Set.of("POST", "PUT", "PATCH");
    /** Headers the JDK client sets itself and refuses to take. */
    private static final Set<String> RESTRICTED_HEADERS = Set.of("connection", "content-length", "expect", "host",
            "upgrade");
    private static final Set<String> FIELDS = Set.of("name", "description", "parameters", "url", "method", "headers",
            "timeoutSeconds", "risk");

    /**
     * Reads the {@code tools} option, a JSON array of tool objects. Throws an
     * {@link IllegalArgumentException} naming the tool and the field for any mistake.
     */
    static List<OpenAiTool> parseAll(String json, Duration defaultTimeout) {
        JsonNode root;
        try {
            root = Json.parseStrict(json);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("option --tools is not valid JSON: " + e.getMessage());
        }
        if (!root.isArray()) {
            throw new IllegalArgumentException("option --tools must be a JSON array of tools, each {name, description,"
                    + " parameters, url, method, headers, timeoutSeconds, risk}");
        }
        List<OpenAiTool> out = new ArrayList<>(root.size());
        Set<String> names = new HashSet<>();
        for (int i = 0; i < root.size(); i++) {
            OpenAiTool tool = parse(root.get(i), i, defaultTimeout);
            if (!names.add(tool.name)) {
                throw new IllegalArgumentException("option --tools: tool " + i + " (" + tool.name
                        + ") has the name of an earlier tool; names must be unique");
            }
            out.add(tool);
        }
        return List.copyOf(out);
    }

    private static OpenAiTool parse(JsonNode node, int index, Duration defaultTimeout) {
        String at = "option --tools: tool " + index;
        if (!node.isObject()) {
            throw new IllegalArgumentException(at + " must be an object {name, description, parameters, url, ...}");
        }
        JsonNode nameNode = node.get("name");
        if (nameNode == null || !nameNode.isTextual() || !NAME.matcher(nameNode.textValue()).matches()) {
            throw new IllegalArgumentException(at + ": field 'name' must be 1 to 64 letters, digits, '_' or '-', got "
                    + (nameNode == null ? "nothing" : nameNode));
        }
        String name = nameNode.textValue();
        String where = at + " (" + name + "): field ";
        for (var it = node.fieldNames(); it.hasNext(); ) {
            String field = it.next();
            if (!FIELDS.contains(field)) {
                throw new IllegalArgumentException(where + "'" + field + "' is unknown; a tool has " + FIELDS);
            }
        }
        String description = optionalText(node, "description", where, "");
        JsonNode parameters = node.get("parameters");
        if (parameters == null || parameters.isNull()) {
            parameters = Json.object().put("type", "object").set("properties", Json.object());
        } else if (!parameters.isObject()) {
            throw new IllegalArgumentException(where + "'parameters' must be a JSON schema object, got " + parameters);
        }
        String urlText = optionalText(node, "url", where, null);
        URI url = urlText == null ? null : httpUrl(urlText);
        if (url == null) {
            throw new IllegalArgumentException(where + "'url' must be an absolute http or https URL, got "
                    + (urlText == null ? "nothing" : "'" + urlText + "'"));
        }
        String method = optionalText(node, "method", where, "POST").toUpperCase(Locale.ROOT);
        if (!METHODS.contains(method)) {
            throw new IllegalArgumentException(where + "'method' must be POST, PUT or PATCH (the arguments are the"
                    + " body), got '" + method + "'");
        }
        Map<String, String> headers = new LinkedHashMap<>();
        JsonNode headersNode = node.get("headers");
        if (headersNode != null && !headersNode.isNull()) {
            if (!headersNode.isObject()) {
                throw new IllegalArgumentException(where + "'headers' must be an object of header names to strings");
            }
            for (var e : headersNode.properties()) {
                if (!e.getValue().isTextual()) {
                    throw new IllegalArgumentException(where + "'headers' value of " + e.getKey() + " must be a string");
                }
                if (RESTRICTED_HEADERS.contains(e.getKey().toLowerCase(Locale.ROOT))) {
                    throw new IllegalArgumentException(where + "'headers' cannot set " + e.getKey()
                            + ", which the gateway sets itself");
                }
                headers.put(e.getKey(), e.getValue().textValue());
            }
        }
        Duration timeout = defaultTimeout;
        JsonNode timeoutNode = node.get("timeoutSeconds");
        if (timeoutNode != null && !timeoutNode.isNull()) {
            if (!timeoutNode.canConvertToInt() || !timeoutNode.isIntegralNumber() || timeoutNode.intValue() < 1
                    || timeoutNode.intValue() > 3_600) {
                throw new IllegalArgumentException(where + "'timeoutSeconds' must be an integer from 1 to 3600, got "
                        + timeoutNode);
            }
            timeout = Duration.ofSeconds(timeoutNode.intValue());
        }
        String riskText = optionalText(node, "risk", where, "low");
        RiskLevel risk = RiskLevel.fromWire(riskText.toLowerCase(Locale.ROOT)).orElseThrow(() ->
                new IllegalArgumentException(where + "'risk' must be low, medium, high or critical, got '" + riskText + "'"));
        return new OpenAiTool(name, description, parameters, url, method, Map.copyOf(headers), timeout, risk);
    }

    private static String optionalText(JsonNode node, String field, String where, String fallback) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return fallback;
        }
        if (!v.isTextual()) {
            throw new IllegalArgumentException(where + "'" + field + "' must be a string, got " + v);
        }
        return v.textValue();
    }

    /** The URI if it is an absolute http or https URL with a host, else null. */
    static URI httpUrl(String text) {
        try {
            URI uri = new URI(text.strip());
            String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
            return (scheme.equals("http") || scheme.equals("https")) && uri.getHost() != null ? uri : null;
        } catch (java.net.URISyntaxException e) {
            return null;
        }
    }
}
