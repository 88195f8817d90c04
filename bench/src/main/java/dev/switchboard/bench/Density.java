package dev.switchboard.bench;

import io.netty.channel.Channel;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Connection density: what idle WebSocket connections cost a server. A fresh server process is
 * measured after a full GC (live heap, from {@code jcmd GC.heap_info}) and by its resident set,
 * before and after N connections are opened and left idle; the difference over N is the cost
 * of one.
 */
public final class Density {
    private static final Pattern USED = Pattern.compile("used (\\d+)K");

    /** Heap and RSS before and after, and the connections that were open. */
    public record Result(String server, Dialect dialect, int connections, long heapBefore, long heapAfter,
                         long rssBefore, long rssAfter, double openSeconds) {
        public double heapPerConnection() {
            return (heapAfter - heapBefore) / (double) connections;
        }

        public double rssPerConnection() {
            return (rssAfter - rssBefore) / (double) connections;
        }
    }

    private final String jcmd;
    private final long settleMillis;

    /** {@code settleMillis}: how long the server is left alone before each reading. */
    public Density(String javaCommand, long settleMillis) {
        this.jcmd = Path.of(javaCommand).resolveSibling("jcmd").toString();
        this.settleMillis = settleMillis;
    }

    public Result measure(ServerProcess server, Dialect dialect, int connections, int clientThreads) throws Exception {
        ServerProcess.sleep(settleMillis);
        long heapBefore = liveHeap(server.pid());
        long rssBefore = ProcessProbe.rssBytes(server.pid());
        try (LoadClient client = new LoadClient(clientThreads)) {
            long start = System.nanoTime();
            List<Channel> open = client.openIdle(server.port, dialect, connections);
            double openSeconds = (System.nanoTime() - start) / 1e9;
            ServerProcess.sleep(settleMillis);
            long heapAfter = liveHeap(server.pid());
            long rssAfter = ProcessProbe.rssBytes(server.pid());
            long stillOpen = open.stream().filter(Channel::isActive).count();
            if (stillOpen != connections) {
                throw new IllegalStateException(server.name + " closed " + (connections - stillOpen) + " idle connections");
            }
            for (Channel ch : open) {
                ch.close();
            }
            return new Result(server.name, dialect, connections, heapBefore, heapAfter, rssBefore, rssAfter, openSeconds);
        }
    }

    /** The heap in use after a full collection. */
    private long liveHeap(long pid) throws IOException, InterruptedException {
        run(pid, "GC.run");
        Matcher m = USED.matcher(run(pid, "GC.heap_info"));
        if (!m.find()) {
            throw new IOException("jcmd GC.heap_info of " + pid + " names no used heap");
        }
        return Long.parseLong(m.group(1)) * 1024;
    }

    private String run(long pid, String command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(jcmd, Long.toString(pid), command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("jcmd " + pid + " " + command + " failed: " + out);
        }
        return out;
    }
}
