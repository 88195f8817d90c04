package dev.switchboard.adapter.a2h;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Json;
import dev.switchboard.core.Principal;
import dev.switchboard.core.spi.RestRequest;
import dev.switchboard.core.spi.RestResponse;
import dev.switchboard.core.spi.RestService;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The A2H REST API as the HumanLayer SDK calls it, under {@code /humanlayer/v1} and
 * {@code /a2h/v1}; the draft's extended protocol (channels, humans) only under {@code /a2h/v1}.
 * Callers present one of the configured API keys as {@code Authorization: Bearer <key>}; with no
 * key configured only loopback callers are served.
 */
final class A2hService implements RestService {
    static final String HUMANLAYER_PREFIX = "/humanlayer/v1";
    static final String A2H_PREFIX = "/a2h/v1";
    static final int DEFAULT_LIMIT = 100;
    static final int MAX_LIMIT = 1_000;

    private final List<byte[]> keys;
    private final A2hCalls calls;
    private final A2hHumans humans;

    /** Who is calling, or the refusal to answer instead. */
    private record Caller(Principal principal, RestResponse refusal) {
    }

    A2hService(List<String> apiKeys, A2hCalls calls, A2hHumans humans) {
        this.keys = apiKeys.stream().map(k -> k.getBytes(StandardCharsets.UTF_8)).toList();
        this.calls = calls;
        this.humans = humans;
    }

    @Override
    public List<String> prefixes() {
        return List.of(HUMANLAYER_PREFIX, A2H_PREFIX);
    }

    @Override
    public CompletionStage<RestResponse> handle(RestRequest request) {
        Caller caller = authenticate(request);
        if (caller.refusal() != null) {
            return CompletableFuture.completedFuture(caller.refusal());
        }
        String[] p = request.path().split("/", -1);
        // POST /agent/{function_calls|human_contacts}/{id}/respond answers when the decision is stored.
        if (p.length == 5 && p[1].equals("agent") && p[4].equals("respond") && agentKind(p[2]).isPresent()) {
            return request.method().equals("POST")
                    ? calls.respond(agentKind(p[2]).get(), p[3], request.body(), caller.principal())
                    : CompletableFuture.completedFuture(notAllowed("POST"));
        }
        return CompletableFuture.completedFuture(route(request));
    }

    private Caller authenticate(RestRequest r) {
        if (keys.isEmpty()) {
            return r.loopback() ? new Caller(Principal.of("a2h-loopback"), null)
                    : new Caller(null, error(403, ErrorCode.FORBIDDEN.wireCode(), "no A2H API key is configured, "
                    + "so only callers on this machine are served; start the gateway with --a2h-api-key", null));
        }
        Optional<String> header = r.header("authorization");
        if (header.isEmpty() || !header.get().regionMatches(true, 0, "Bearer ", 0, 7)) {
            return new Caller(null, unauthorized("send the API key as Authorization: Bearer <key>"));
        }
        byte[] given = header.get().substring(7).strip().getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < keys.size(); i++) {
            if (MessageDigest.isEqual(keys.get(i), given)) {
                return new Caller(Principal.of("a2h-key-" + (i + 1)), null);
            }
        }
        return new Caller(null, unauthorized("the API key is not valid"));
    }

    private static RestResponse unauthorized(String message) {
        RestResponse r = error(401, ErrorCode.AUTH_FAILED.wireCode(), message, null);
        return new RestResponse(r.status(), r.json(), Map.of("WWW-Authenticate", "Bearer"));
    }

    private RestResponse route(RestRequest r) {
        String[] p = r.path().length() > 1 ? r.path().substring(1).split("/", -1) : new String[0];
        boolean extended = r.prefix().equals(A2H_PREFIX);
        String m = r.method();
        switch (p.length) {
            case 1:
                switch (p[0]) {
                    case "function_calls":
                        return only("POST", m, () -> calls.create(A2hCalls.Kind.FUNCTION_CALL, r.body()));
                    case "contact_requests", "human_contacts":
                        return only("POST", m, () -> calls.create(A2hCalls.Kind.HUMAN_CONTACT, r.body()));
                    case "channels":
                        if (extended) {
                            return only("GET", m, () -> RestResponse.json(200, A2hChannels.describe()));
                        }
                        break;
                    case "humans":
                        if (extended) {
                            return m.equals("POST") ? humans.enroll(r.body()) : m.equals("GET") ? humans.list()
                                    : notAllowed("GET, POST");
                        }
                        break;
                    default:
                        break;
                }
                break;
            case 2:
                switch (p[0]) {
                    case "function_calls":
                        return only("GET", m, () -> calls.get(A2hCalls.Kind.FUNCTION_CALL, p[1]));
                    case "contact_requests", "human_contacts":
                        return only("GET", m, () -> calls.get(A2hCalls.Kind.HUMAN_CONTACT, p[1]));
                    case "humans":
                        if (extended) {
                            return p[1].equals("search") ? only("GET", m, () -> humans.search(r.queryParam("q")))
                                    : only("GET", m, () -> humans.get(p[1]));
                        }
                        break;
                    default:
                        break;
                }
                break;
            case 3:
                if (p[0].equals("agent") && p[2].equals("pending")) {
                    Optional<A2hCalls.Kind> kind = agentKind(p[1]);
                    if (kind.isPresent()) {
                        return only("GET", m, () -> pending(kind.get(), r));
                    }
                }
                break;
            default:
                break;
        }
        return error(404, ErrorCode.NOT_FOUND.wireCode(), "no A2H endpoint " + m + " " + r.prefix() + r.path()
                + (extended ? "" : " (the extended protocol is served under " + A2H_PREFIX + ")"), null);
    }

    private static Optional<A2hCalls.Kind> agentKind(String segment) {
        return switch (segment) {
            case "function_calls" -> Optional.of(A2hCalls.Kind.FUNCTION_CALL);
            case "human_contacts" -> Optional.of(A2hCalls.Kind.HUMAN_CONTACT);
            default -> Optional.empty();
        };
    }

    private RestResponse pending(A2hCalls.Kind kind, RestRequest r) {
        A2hInput in = new A2hInput();
        int limit = intParam(r, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT, in);
        int offset = intParam(r, "offset", 0, 0, Integer.MAX_VALUE, in);
        return in.failed() ? error(in.error()) : calls.pending(kind, limit, offset);
    }

    private static int intParam(RestRequest r, String name, int fallback, int min, int max, A2hInput in) {
        Optional<String> v = r.queryParam(name);
        if (v.isEmpty()) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(v.get().strip());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        in.invalid(name, "an integer from " + min + " to " + max);
        return fallback;
    }

    /** Answers with {@code endpoint} for {@code method}, else 405 naming the allowed one. */
    private static RestResponse only(String method, String given, Supplier<RestResponse> endpoint) {
        return method.equals(given) ? endpoint.get() : notAllowed(method);
    }

    private static RestResponse notAllowed(String allowed) {
        RestResponse r = error(405, "method_not_allowed", "use " + allowed.replace(", ", " or ") + " here", null);
        return new RestResponse(405, r.json(), Map.of("Allow", allowed));
    }

    /** The error body of every refusal: {@code {"error": {"code", "message", "details"?}}}. */
    static RestResponse error(GatewayError e) {
        return error(e.code().httpStatus(), e.code().wireCode(), e.message(), e.details().get("field"));
    }

    static RestResponse error(int status, String code, String message, String field) {
        ObjectNode body = Json.object();
        ObjectNode error = body.putObject("error").put("code", code).put("message", message);
        if (field != null) {
            error.putObject("details").put("field", field);
        }
        return RestResponse.json(status, body);
    }
}
