package dev.switchboard.server;

import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The gateway's {@code Main} in a child JVM, as the jar runs it: one that a test can kill with
 * SIGKILL, stop with SIGTERM, and ask for its heap through {@code jcmd}. Its output goes to a log
 * file the test can read; Netty's leak detector runs at the paranoid level there too.
 */
final class ChildGateway {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");

    final Process process;
    final int port;
    final Path log;

    private ChildGateway(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /** A port free now, for a child that must come back on the same one after a restart. */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /**
     * Starts {@code Main --port port --data-dir dataDir <args>} with this JVM's class path and
     * waits until {@code /healthz} answers.
     */
    static ChildGateway start(Path dataDir, int port, Path log, List<String> jvmArgs, String... args)
            throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(java.toString(), "-Dio.netty.leakDetection.level=paranoid"));
        command.addAll(jvmArgs);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), "dev.switchboard.server.Main",
                "--port", String.valueOf(port), "--data-dir", dataDir.toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        ChildGateway child = new ChildGateway(p, port, log);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!child.healthy()) {
            if (!p.isAlive() || System.nanoTime() > deadline) {
                p.destroyForcibly();
                throw new IllegalStateException("the child gateway did not start; its log:\n" + child.logText());
            }
            Thread.sleep(50);
        }
        return child;
    }

    /** What a child {@code Main} that was expected to stop by itself printed, and its exit code. */
    record Exit(int code, String output) {
    }

    /**
     * Runs {@code Main <args>} with this JVM's class path and the extra environment, and waits for
     * it to exit by itself (within 60 s; else it is killed and the test fails).
     */
    static Exit run(java.util.Map<String, String> env, String... args) throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(java.toString(), "-cp", System.getProperty("java.class.path"),
                "dev.switchboard.server.Main"));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().keySet().removeIf(k -> k.startsWith("SWITCHBOARD_"));
        pb.environment().putAll(env);
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("Main did not exit within 60 s: " + new String(out, StandardCharsets.UTF_8));
        }
        return new Exit(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    boolean healthy() throws InterruptedException {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz"))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (ConnectException | java.net.http.HttpTimeoutException notYet) {
            return false;
        } catch (IOException other) {
            return false;
        }
    }

    /** {@code kill -9}: no shutdown hook, no flush, no goodbye to any client. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the child gateway outlived SIGKILL");
        }
    }

    /** SIGTERM and the gateway's graceful shutdown; its exit code. */
    int stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("the child gateway did not stop within 60 s of SIGTERM");
        }
        return process.exitValue();
    }

    /** A full GC in the child, then the heap it still uses, in bytes. */
    long heapUsedAfterGc() throws IOException, InterruptedException {
        jcmd("GC.run");
        String info = jcmd("GC.heap_info");
        Matcher m = HEAP_USED.matcher(info);
        if (!m.find()) {
            throw new IllegalStateException("no heap figure in jcmd GC.heap_info: " + info);
        }
        return Long.parseLong(m.group(1)) * 1024;
    }

    private String jcmd(String what) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()), what).redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("jcmd " + what + " failed: " + out);
        }
        return out;
    }

    String logText() throws IOException {
        return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
    }
}
