package dev.switchboard.server.internal;

import dev.switchboard.core.Json;
import dev.switchboard.server.GatewayConfig;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Serves the playground page: {@code GET /} is {@code playground/index.html} from the class path,
 * {@code GET /playground/<file>} the page's other files, and {@code GET /playground/info.json} what
 * the page needs to know of this gateway (whether it asks for a token, which runtime answers).
 *
 * <p>Only names of letters, digits, {@code _} and {@code -}, with single dots between them, in
 * folders of such names, are looked up, and only with an extension of a known content type: no
 * {@code ..}, no hidden file, no folder, whatever the request's encoding. Files are read once and
 * kept; the browser revalidates them ({@code no-cache} with an {@code ETag}), so a new jar is seen at
 * once. The page holds no data, so it is served without a token even when authentication is on; its
 * requests to the dialects carry one.
 */
public final class PlaygroundFiles {
    /** The folder of the page's files on the class path. */
    static final String ROOT = "playground/";
    /** The URL prefix of every file but the page itself. */
    static final String PREFIX = "/playground/";
    private static final String INFO = "info.json";
    private static final Pattern NAME = Pattern.compile(
            "[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*(/[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*)*");
    private static final Map<String, String> TYPES = Map.of(
            "html", "text/html; charset=utf-8",
            "js", "text/javascript; charset=utf-8",
            "css", "text/css; charset=utf-8",
            "svg", "image/svg+xml",
            "png", "image/png",
            "json", "application/json");
    /**
     * Scripts, styles and connections of this origin only (WebSockets included); images may also be
     * {@code data:} URLs (the icon). Nothing is fetched from elsewhere.
     */
    private static final String CONTENT_SECURITY_POLICY = "default-src 'self'; connect-src 'self' ws: wss:; "
            + "img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

    private record File(byte[] bytes, String type, String etag) {
    }

    private final ClassLoader loader;
    private final Map<String, File> files = new ConcurrentHashMap<>();

    /**
     * @param authRequired whether the dialects ask for a token, which the page then asks the person for
     * @param runtime      the runtime that answers, for the page's hints
     * @param version      the gateway's version
     */
    public PlaygroundFiles(boolean authRequired, String runtime, String version) {
        this.loader = PlaygroundFiles.class.getClassLoader();
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("auth", authRequired);
        info.put("runtime", runtime);
        info.put("version", version);
        try {
            byte[] json = Json.MAPPER.writeValueAsBytes(info);
            files.put(INFO, new File(json, TYPES.get("json"), etag(json)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Whether the address is this machine's loopback ({@code 127.0.0.1}, {@code ::1}, {@code localhost}). */
    public static boolean isLoopback(String host) {
        try {
            return InetAddress.getByName(host.strip()).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** Whether the playground is served, where, and why: a line of the start-up log. */
    public static String startupLine(GatewayConfig config, int port) {
        String option = config.get(GatewayConfig.Option.PLAYGROUND).strip().toLowerCase(Locale.ROOT);
        boolean on = config.playground();
        String why = !option.equals("auto") ? "--playground " + option
                : "--host " + config.host() + (on ? " is" : " is not") + " a loopback address";
        String host = config.host().contains(":") ? "[" + config.host() + "]" : config.host();
        return on ? "playground on at http://" + host + ":" + port + "/ (" + why + "; --playground false turns it off)"
                : "playground off (" + why + "; --playground true serves it at /)";
    }

    /** Whether the path is the page's: {@code /} or under {@code /playground/}. */
    boolean serves(String path) {
        return path.equals("/") || path.startsWith(PREFIX);
    }

    /** Answers a request for one of the page's paths (see {@link #serves}). */
    void serve(ChannelHandlerContext ctx, FullHttpRequest req, String path) {
        if (req.method() != HttpMethod.GET && req.method() != HttpMethod.HEAD) {
            HttpRouter.sendError(ctx, req, HttpResponseStatus.METHOD_NOT_ALLOWED, "method_not_allowed", "use GET",
                    res -> res.headers().set(HttpHeaderNames.ALLOW, "GET, HEAD"));
            return;
        }
        String name = path.equals("/") ? "index.html" : path.substring(PREFIX.length());
        Optional<File> found = find(name);
        if (found.isEmpty()) {
            HttpRouter.sendError(ctx, req, HttpResponseStatus.NOT_FOUND, "not_found", "no playground file " + path);
            return;
        }
        File file = found.get();
        boolean fresh = file.etag().equals(req.headers().get(HttpHeaderNames.IF_NONE_MATCH));
        boolean body = !fresh && req.method() == HttpMethod.GET;
        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                fresh ? HttpResponseStatus.NOT_MODIFIED : HttpResponseStatus.OK,
                body ? Unpooled.wrappedBuffer(file.bytes()) : Unpooled.EMPTY_BUFFER);
        res.headers().set(HttpHeaderNames.CONTENT_TYPE, file.type())
                .set(HttpHeaderNames.CACHE_CONTROL, "no-cache")
                .set(HttpHeaderNames.ETAG, file.etag())
                .set("X-Content-Type-Options", "nosniff")
                .set("Referrer-Policy", "no-referrer");
        if (file.type().startsWith("text/html")) {
            res.headers().set("Content-Security-Policy", CONTENT_SECURITY_POLICY);
        }
        HttpUtil.setContentLength(res, fresh ? 0 : file.bytes().length);
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        HttpUtil.setKeepAlive(res, keepAlive);
        var f = ctx.writeAndFlush(res);
        if (!keepAlive) {
            f.addListener(ChannelFutureListener.CLOSE);
        }
    }

    /** The file of that name, read from the class path the first time; empty for a name that is not the page's. */
    private Optional<File> find(String name) {
        File known = files.get(name);
        if (known != null) {
            return Optional.of(known);
        }
        int dot = name.lastIndexOf('.');
        String type = dot < 0 ? null : TYPES.get(name.substring(dot + 1));
        if (type == null || !NAME.matcher(name).matches()) {
            return Optional.empty();
        }
        try (InputStream in = loader.getResourceAsStream(ROOT + name)) {
            if (in == null) {
                return Optional.empty();
            }
            byte[] bytes = in.readAllBytes();
            // Only files that exist are kept, so the map holds at most the page's files.
            return Optional.of(files.computeIfAbsent(name, n -> new File(bytes, type, etag(bytes))));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static String etag(byte[] bytes) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(bytes);
            return "\"" + HexFormat.of().formatHex(hash, 0, 12) + "\"";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
