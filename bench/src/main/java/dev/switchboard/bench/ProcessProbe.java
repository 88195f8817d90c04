package dev.switchboard.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Reads processes' CPU time and resident memory from {@code /proc/<pid>} (Linux), and samples
 * them over a phase. It also reads the machine's busy CPU time from {@code /proc/stat}, so a
 * report can say how much CPU processes other than the measured ones took meanwhile.
 */
public final class ProcessProbe {
    /** Clock ticks per second of {@code /proc} CPU times; 100 on Linux unless built otherwise. */
    private static final double TICKS = 100.0;
    private static final long SAMPLE_MILLIS = 20;

    private final List<Long> pids;
    private final Map<Long, Long> startTicks = new HashMap<>();
    private final Map<Long, Long> startJitTicks = new HashMap<>();
    private final Map<Long, Map<String, Long>> startWaits = new HashMap<>();
    private final Map<Long, Long> peakRss = new HashMap<>();
    private final long machineStart;
    private final Thread sampler;
    private volatile boolean running = true;

    private ProcessProbe(List<Long> pids) {
        this.pids = pids;
        for (long pid : pids) {
            startTicks.put(pid, cpuTicks(pid));
            startJitTicks.put(pid, jitTicks(pid));
            startWaits.put(pid, runQueueWaits(pid));
            peakRss.put(pid, rssBytes(pid));
        }
        machineStart = machineBusyTicks();
        sampler = new Thread(this::sample, "bench-proc-sampler");
        sampler.setDaemon(true);
        sampler.start();
    }

    /** Starts watching these processes. */
    public static ProcessProbe watch(List<Long> pids) {
        return new ProcessProbe(pids);
    }

    private void sample() {
        while (running) {
            synchronized (peakRss) {
                for (long pid : pids) {
                    peakRss.merge(pid, rssBytes(pid), Math::max);
                }
            }
            try {
                Thread.sleep(SAMPLE_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Stops watching; the CPU time each process used since {@link #watch} and its peak RSS. */
    public Map<Long, ProcessStats> stop() {
        running = false;
        sampler.interrupt();
        try {
            sampler.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Map<Long, ProcessStats> out = new HashMap<>();
        for (long pid : pids) {
            long ticks = cpuTicks(pid) - startTicks.get(pid);
            long jit = jitTicks(pid) - startJitTicks.get(pid);
            long rss = Math.max(peakRss.get(pid), rssBytes(pid));
            long wait = runQueueWaitNanosSince(pid, startWaits.get(pid));
            out.put(pid, new ProcessStats(ticks / TICKS, rss, jit / TICKS, wait / 1e9));
        }
        return out;
    }

    /** CPU seconds the whole machine was busy since {@link #watch}, all processes together. */
    public double machineBusySeconds() {
        return (machineBusyTicks() - machineStart) / TICKS;
    }

    /** User plus system CPU ticks of a process; 0 when it is gone. */
    public static long cpuTicks(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // After "pid (comm) ": state is field 3 of proc(5), utime 14 and stime 15.
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /**
     * User plus system CPU ticks of a JVM's JIT compiler threads (HotSpot's {@code C1 CompilerThread}
     * and {@code C2 CompilerThread}, whose names the kernel keeps as {@code C1 CompilerThre} and
     * {@code C2 CompilerThre}); 0 for a process without them or that is gone. Threads that ended
     * take their ticks with them, so this can fall when the JVM retires a compiler thread.
     */
    public static long jitTicks(long pid) {
        long ticks = 0;
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    String comm = Files.readString(task.resolve("comm")).strip();
                    if (comm.startsWith("C1 CompilerThre") || comm.startsWith("C2 CompilerThre")) {
                        String stat = Files.readString(task.resolve("stat"));
                        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
                    }
                } catch (IOException | RuntimeException e) {
                    // The thread ended between the listing and the read.
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return ticks;
    }

    /**
     * The run delay of each thread of a process, by thread id: the nanoseconds it spent ready to run
     * and waiting for a core, the second field of its {@code /proc/<pid>/task/<tid>/schedstat}; empty
     * for a process that is gone.
     */
    static Map<String, Long> runQueueWaits(long pid) {
        Map<String, Long> waits = new HashMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    String[] f = Files.readString(task.resolve("schedstat")).strip().split(" ");
                    waits.put(task.getFileName().toString(), Long.parseLong(f[1]));
                } catch (IOException | RuntimeException e) {
                    // The thread ended between the listing and the read.
                }
            }
        } catch (IOException | RuntimeException e) {
            return Map.of();
        }
        return waits;
    }

    /**
     * Nanoseconds the threads of a process waited for a core since {@code before} (its
     * {@link #runQueueWaits} then): each thread alive now, less what it had waited then (a thread
     * started since counts whole). A thread that ended meanwhile takes its wait with it, so this
     * counts short when threads come and go.
     */
    static long runQueueWaitNanosSince(long pid, Map<String, Long> before) {
        long nanos = 0;
        for (Map.Entry<String, Long> t : runQueueWaits(pid).entrySet()) {
            nanos += Math.max(0, t.getValue() - before.getOrDefault(t.getKey(), 0L));
        }
        return nanos;
    }

    /**
     * CPU ticks of a process and all its descendants (a database server and its backends): user and
     * system time of each, and of the children each has already reaped.
     */
    public static long treeCpuTicks(long pid) {
        Optional<ProcessHandle> root = ProcessHandle.of(pid);
        if (root.isEmpty()) {
            return 0;
        }
        long ticks = cpuTicksWithReaped(pid);
        try (Stream<ProcessHandle> all = root.get().descendants()) {
            for (ProcessHandle p : (Iterable<ProcessHandle>) all::iterator) {
                ticks += cpuTicksWithReaped(p.pid());
            }
        }
        return ticks;
    }

    private static long cpuTicksWithReaped(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // utime, stime, cutime, cstime: fields 14 to 17 of proc(5).
            return Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13]) + Long.parseLong(f[14]);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** Seconds of CPU for a count of {@code /proc} ticks. */
    public static double seconds(long ticks) {
        return ticks / TICKS;
    }

    /** The process's resident set now; 0 when it is gone. */
    public static long rssBytes(long pid) {
        return statusKib(pid, "VmRSS:") * 1024;
    }

    /** The largest resident set the process has had in its life. */
    public static long peakRssBytes(long pid) {
        return statusKib(pid, "VmHWM:") * 1024;
    }

    private static long statusKib(long pid, String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith(field)) {
                    return Long.parseLong(line.substring(field.length()).replace("kB", "").strip());
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return 0;
    }

    /** Busy ticks of all CPUs: everything in the first line of /proc/stat but idle and iowait. */
    static long machineBusyTicks() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).split("\\s+");
            long busy = 0;
            for (int i = 1; i < f.length && i <= 8; i++) {
                if (i != 4 && i != 5) {
                    busy += Long.parseLong(f[i]);
                }
            }
            return busy;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }
}
