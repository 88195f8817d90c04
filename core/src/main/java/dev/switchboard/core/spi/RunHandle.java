package dev.switchboard.core.spi;

/** A started run, as its runtime lets the hub control it. */
@FunctionalInterface
public interface RunHandle {
    /** Asks the runtime to stop the run soon; it need not emit anything afterwards. */
    void cancel();
}
