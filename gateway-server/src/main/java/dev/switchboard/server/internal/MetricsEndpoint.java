package dev.switchboard.server.internal;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.switchboard.server.StartupException;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * {@code GET /metrics} on a port of its own ({@code --metrics-port}), apart from the clients' port:
 * an operator can keep it off the public network. A scrape is a few requests a minute, so the
 * JDK's HTTP server on one thread serves it; every other path is 404.
 */
public final class MetricsEndpoint implements AutoCloseable {
    private final HttpServer server;
    private final ExecutorService thread;

    private MetricsEndpoint(HttpServer server, ExecutorService thread) {
        this.server = server;
        this.thread = thread;
    }

    /** Listens on {@code host:port}; a port in use stops the start, in one line. */
    public static MetricsEndpoint start(String host, int port, Supplier<String> scrape) {
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(host, port), 16);
        } catch (IOException e) {
            throw new StartupException("cannot serve /metrics on " + host + ":" + port + ": " + e.getMessage()
                    + "; choose another --metrics-port", e);
        }
        ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "switchboard-metrics");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(thread);
        server.createContext("/", exchange -> answer(exchange, scrape));
        server.start();
        return new MetricsEndpoint(server, thread);
    }

    private static void answer(HttpExchange exchange, Supplier<String> scrape) throws IOException {
        try (exchange) {
            String method = exchange.getRequestMethod();
            if (!exchange.getRequestURI().getPath().equals("/metrics")) {
                send(exchange, 404, "application/json", "{\"error\":{\"code\":\"not_found\",\"message\":"
                        + "\"this port serves GET /metrics only\"}}", false);
            } else if (!method.equals("GET") && !method.equals("HEAD")) {
                send(exchange, 405, "application/json",
                        "{\"error\":{\"code\":\"method_not_allowed\",\"message\":\"use GET\"}}", false);
            } else {
                send(exchange, 200, HttpRouter.METRICS_CONTENT_TYPE, scrape.get(), method.equals("HEAD"));
            }
        }
    }

    private static void send(HttpExchange exchange, int status, String type, String body, boolean head)
            throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        if (head) {
            exchange.getResponseHeaders().set("Content-Length", Integer.toString(bytes.length));
            exchange.sendResponseHeaders(status, -1);
            return;
        }
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    public int port() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
        thread.shutdownNow();
    }
}
