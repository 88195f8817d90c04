package dev.switchboard.core.spi;

/** A dialect's answer when shown the first frame of a connection whose dialect is not yet known. */
public enum Probe {
    /** The frame is this dialect's. */
    MATCH,
    /** The frame is not this dialect's. */
    NO_MATCH,
    /** Cannot tell from this much. */
    NEED_MORE
}
