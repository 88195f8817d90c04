package dev.switchboard.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs one of the Node.js official-client scripts under src/test/node against a gateway. */
final class NodeClient {
    static final Path DIR = Path.of("src", "test", "node").toAbsolutePath();

    record Result(int exitCode, List<String> lines) {
        String output() {
            return String.join("\n", lines);
        }
    }

    private NodeClient() {
    }

    static Result run(String script, long timeoutSeconds, String... args) throws IOException, InterruptedException {
        return run(script, Map.of(), timeoutSeconds, args);
    }

    /** Runs a script with these variables added to its environment. */
    static Result run(String script, Map<String, String> env, long timeoutSeconds, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("node", DIR.resolve(script).toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(DIR.toFile()).redirectErrorStream(true);
        builder.environment().putAll(env);
        Process p = builder.start();
        List<String> lines = new ArrayList<>();
        Thread reader = new Thread(() -> {
            try (var r = p.inputReader(StandardCharsets.UTF_8)) {
                for (String line; (line = r.readLine()) != null; ) {
                    synchronized (lines) {
                        lines.add(line);
                    }
                }
            } catch (IOException ignored) {
                // the process ended
            }
        });
        reader.start();
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            reader.join(1000);
            throw new AssertionError(script + " did not finish within " + timeoutSeconds + " s:\n" + String.join("\n", lines));
        }
        reader.join(5000);
        synchronized (lines) {
            return new Result(p.exitValue(), List.copyOf(lines));
        }
    }
}
