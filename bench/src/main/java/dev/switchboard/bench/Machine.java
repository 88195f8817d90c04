package dev.switchboard.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.TimeUnit;

/** What the report says of the machine and the software the figures were taken with. */
public record Machine(String date, String commit, String cpu, int cores, String memory, String kernel, String jdk,
                      String node, String loadStart, String loadEnd) {

    /** Reads the machine now; {@code loadEnd} is filled in by {@link #ended()}. */
    public static Machine read(Path repo) {
        String cpu = "unknown";
        String memory = "unknown";
        try {
            cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst().orElse(cpu);
            memory = Files.readAllLines(Path.of("/proc/meminfo")).stream().filter(l -> l.startsWith("MemTotal"))
                    .map(l -> String.format("%.1f GiB", Long.parseLong(l.replaceAll("\\D", "")) / 1024.0 / 1024.0))
                    .findFirst().orElse(memory);
        } catch (IOException | RuntimeException e) {
            // not Linux: leave unknown
        }
        return new Machine(ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'")),
                command(repo, "git", "rev-parse", "--short", "HEAD"), cpu, Runtime.getRuntime().availableProcessors(),
                memory, read("/proc/sys/kernel/osrelease"),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
                command(repo, "node", "--version"), load(), "");
    }

    /**
     * The same machine, its JDK row naming also the java that runs the servers when that is not the
     * one running the suite (and the load generator).
     */
    public Machine withServerJava(String java) {
        String version = command(Path.of("."), java, "-XshowSettings:properties", "-version").lines()
                .map(String::strip).filter(l -> l.startsWith("java.runtime.version = "))
                .map(l -> l.substring("java.runtime.version = ".length())).findFirst().orElse("unknown version");
        return new Machine(date, commit, cpu, cores, memory, kernel,
                jdk + " (the suite and the load generator); the gateway and the floor on " + java + " " + version,
                node, loadStart, loadEnd);
    }

    public Machine ended() {
        return new Machine(date, commit, cpu, cores, memory, kernel, jdk, node, loadStart, load());
    }

    private static String load() {
        String avg = read("/proc/loadavg");
        return avg.isEmpty() ? "unknown" : avg.split(" ")[0];
    }

    private static String read(String file) {
        try {
            return Files.readString(Path.of(file)).strip();
        } catch (IOException e) {
            return "";
        }
    }

    private static String command(Path dir, String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes()).strip();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0 ? out : "unknown";
        } catch (IOException | InterruptedException e) {
            return "unknown";
        }
    }
}
