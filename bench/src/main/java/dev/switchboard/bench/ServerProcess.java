package dev.switchboard.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A server under test run as a child process (the gateway's jar, the floor, the Node peer), so
 * that its CPU time and memory can be read from {@code /proc/<pid>} apart from the load
 * generator's. Its output goes to a log file.
 */
public final class ServerProcess implements AutoCloseable {
    public final String name;
    public final int port;
    private final Process process;
    private final Path scratch;

    private ServerProcess(String name, int port, Process process, Path scratch) {
        this.name = name;
        this.port = port;
        this.process = process;
        this.scratch = scratch;
    }

    /** Starts {@code command} (which must listen on {@code port}) and waits until it accepts connections. */
    public static ServerProcess start(String name, int port, List<String> command, Path log) throws IOException {
        return start(name, port, command, log, null);
    }

    /** As {@link #start(String, int, List, Path)}; {@code scratch} (may be null) is deleted when it stops. */
    public static ServerProcess start(String name, int port, List<String> command, Path log, Path scratch)
            throws IOException {
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        ServerProcess server = new ServerProcess(name, port, p, scratch);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IOException(name + " exited with " + p.exitValue() + " at start; see " + log);
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return server;
            } catch (IOException notYet) {
                sleep(100);
            }
        }
        p.destroyForcibly();
        throw new IOException(name + " did not listen on port " + port + " within 60 s; see " + log);
    }

    /** {@code count} different ports that were free a moment ago on loopback. */
    public static int[] freePorts(int count) throws IOException {
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
                held.add(s);
                ports[i] = s.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
    }

    /** A port that was free a moment ago on loopback. */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    public long pid() {
        return process.pid();
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** SIGTERM, then SIGKILL if it has not stopped within 20 s. */
    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        if (scratch != null) {
            try (Stream<Path> files = Files.walk(scratch)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (IOException e) {
                System.err.println("bench: could not delete " + scratch + ": " + e.getMessage());
            }
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
