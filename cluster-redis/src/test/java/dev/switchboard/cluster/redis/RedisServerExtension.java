package dev.switchboard.cluster.redis;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.embedded.core.ExecutableProvider;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real Redis server on a free loopback port for the tests of one class: the {@code redis-server} on
 * the PATH when there is one (Debian's package on CI), else the one bundled with
 * {@code com.github.codemonstur:embedded-redis}. Nothing is persisted, so {@link #restart()} is a
 * Redis that lost its data.
 */
public final class RedisServerExtension implements BeforeAllCallback, AfterAllCallback {
    private static final Logger log = LoggerFactory.getLogger(RedisServerExtension.class);
    private static final long START_TIMEOUT_MS = 10_000;

    private Path binary;
    private Path dir;
    private int port;
    private Process process;

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        binary = findBinary();
        dir = Files.createTempDirectory("switchboard-redis");
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        start();
        log.info("Redis {} from {} on 127.0.0.1:{}", version(), binary, port);
    }

    @Override
    public void afterAll(ExtensionContext context) throws IOException {
        stop();
        try (var files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
    }

    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    /** The server's version, as {@code redis-server --version} prints it. */
    public String version() throws IOException {
        Process p = new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("v=(\\S+)").matcher(out);
        return m.find() ? m.group(1) : out.strip();
    }

    /** Starts the server on this extension's port and waits until it answers {@code PING}. */
    public void start() throws IOException {
        process = new ProcessBuilder(List.of(binary.toString(), "--port", Integer.toString(port),
                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString()))
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile())
                .start();
        long deadline = System.currentTimeMillis() + START_TIMEOUT_MS;
        while (!answersPing()) {
            if (!process.isAlive() || System.currentTimeMillis() > deadline) {
                throw new IOException("redis-server did not start on port " + port + ": "
                        + Files.readString(dir.resolve("redis.log")));
            }
            sleep(20);
        }
    }

    /** Kills the server, as a crash would: everything it held is gone. */
    public void stop() {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        process = null;
    }

    /** A Redis restart without persistence: a fresh, empty server on the same port. */
    public void restart() throws IOException {
        stop();
        start();
    }

    /** The PID of the running server, to read its CPU time. */
    public long pid() {
        return process.pid();
    }

    private boolean answersPing() {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(1_000);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] reply = in.readNBytes(7);
            return new String(reply, StandardCharsets.US_ASCII).equals("+PONG\r\n");
        } catch (IOException e) {
            return false;
        }
    }

    private static Path findBinary() throws IOException {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, "redis-server");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        try {
            return ExecutableProvider.newJarResourceProvider().get().toPath();
        } catch (IOException | RuntimeException e) {
            throw new IOException("no redis-server on the PATH and none bundled for this platform "
                    + "(apt-get install redis-server)", e);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UncheckedIOException(new IOException("interrupted while waiting for redis-server"));
        }
    }
}
