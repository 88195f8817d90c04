package dev.switchboard.core.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Records what one logger logs at INFO and above while it is open (and keeps it out of the test
 * output); closing it restores the logger.
 */
public final class LogCapture extends AppenderBase<ILoggingEvent> implements AutoCloseable {
    private final Logger logger;
    private final Level previousLevel;
    private final boolean previousAdditive;
    private final Queue<ILoggingEvent> events = new ConcurrentLinkedQueue<>();

    private LogCapture(Logger logger) {
        this.logger = logger;
        this.previousLevel = logger.getLevel();
        this.previousAdditive = logger.isAdditive();
    }

    /** Starts recording the logger of this class. */
    public static LogCapture of(Class<?> source) {
        LogCapture capture = new LogCapture((Logger) LoggerFactory.getLogger(source));
        capture.setContext(capture.logger.getLoggerContext());
        capture.start();
        capture.logger.addAppender(capture);
        capture.logger.setLevel(Level.INFO);
        capture.logger.setAdditive(false);
        return capture;
    }

    @Override
    protected void append(ILoggingEvent event) {
        events.add(event);
    }

    /** The messages logged at this level so far, formatted. */
    public List<String> messages(Level level) {
        return events.stream().filter(e -> e.getLevel() == level).map(ILoggingEvent::getFormattedMessage).toList();
    }

    /** Waits for a message at this level that contains every part, and returns it; fails naming what was logged. */
    public String await(Level level, Duration wait, String... parts) {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            for (String m : messages(level)) {
                if (Arrays.stream(parts).allMatch(m::contains)) {
                    return m;
                }
            }
            assertThat(System.nanoTime()).as("a %s message with %s; logged: %s", level, Arrays.toString(parts),
                    events.stream().map(e -> e.getLevel() + " " + e.getFormattedMessage()).toList()).isLessThan(deadline);
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    @Override
    public void close() {
        logger.detachAppender(this);
        logger.setLevel(previousLevel);
        logger.setAdditive(previousAdditive);
        stop();
    }
}
