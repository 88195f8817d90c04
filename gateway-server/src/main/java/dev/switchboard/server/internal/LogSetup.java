package dev.switchboard.server.internal;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.Context;
import ch.qos.logback.core.OutputStreamAppender;
import net.logstash.logback.composite.loggingevent.KeyValuePairsJsonProvider;
import net.logstash.logback.composite.loggingevent.LogLevelJsonProvider;
import net.logstash.logback.composite.loggingevent.LoggerNameJsonProvider;
import net.logstash.logback.composite.loggingevent.LoggingEventFormattedTimestampJsonProvider;
import net.logstash.logback.composite.loggingevent.LoggingEventJsonProviders;
import net.logstash.logback.composite.loggingevent.LoggingEventThreadNameJsonProvider;
import net.logstash.logback.composite.loggingevent.MdcJsonProvider;
import net.logstash.logback.composite.loggingevent.MessageJsonProvider;
import net.logstash.logback.composite.loggingevent.StackTraceJsonProvider;
import net.logstash.logback.encoder.LoggingEventCompositeJsonEncoder;
import org.slf4j.LoggerFactory;

import java.util.Iterator;

/**
 * How the gateway logs, as {@code --log-level} and {@code --log-format} say: logback.xml writes
 * readable text to standard error; {@code json} gives the root logger's appenders the encoder of
 * {@link #jsonEncoder}, one JSON object a line.
 */
public final class LogSetup {
    /** The value of {@code --log-format} that writes JSON lines. */
    public static final String JSON = "json";

    private LogSetup() {
    }

    /**
     * Sets the root logger's level ({@code null} leaves the one logback.xml set) and, for
     * {@link #JSON}, the encoder of its appenders. Does nothing when SLF4J is not bound to Logback.
     */
    public static void apply(String level, String format) {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
            return;
        }
        Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        if (level != null) {
            root.setLevel(Level.toLevel(level, Level.INFO));
        }
        if (JSON.equals(format)) {
            for (Iterator<Appender<ILoggingEvent>> it = root.iteratorForAppenders(); it.hasNext(); ) {
                if (it.next() instanceof OutputStreamAppender<ILoggingEvent> appender) {
                    appender.stop();
                    appender.setEncoder(jsonEncoder(context));
                    appender.start();
                }
            }
        }
    }

    /**
     * One JSON object a line, its fields in this order: {@code timestamp} (ISO-8601 in UTC, with
     * milliseconds), {@code level}, {@code logger}, {@code thread}, {@code message}, every MDC key as
     * a field of its own ({@code conversation_id}, {@code run_id}, and the trace's ids where tracing
     * sets them), SLF4J key-value pairs, and {@code stack_trace} when an exception is logged.
     */
    public static LoggingEventCompositeJsonEncoder jsonEncoder(Context context) {
        LoggingEventJsonProviders providers = new LoggingEventJsonProviders();
        LoggingEventFormattedTimestampJsonProvider timestamp = new LoggingEventFormattedTimestampJsonProvider();
        timestamp.setFieldName("timestamp");
        timestamp.setPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'");
        timestamp.setTimeZone("UTC");
        providers.addTimestamp(timestamp);
        providers.addLogLevel(new LogLevelJsonProvider());
        LoggerNameJsonProvider logger = new LoggerNameJsonProvider();
        logger.setFieldName("logger");
        providers.addLoggerName(logger);
        LoggingEventThreadNameJsonProvider thread = new LoggingEventThreadNameJsonProvider();
        thread.setFieldName("thread");
        providers.addThreadName(thread);
        providers.addMessage(new MessageJsonProvider());
        providers.addMdc(new MdcJsonProvider());
        providers.addKeyValuePairs(new KeyValuePairsJsonProvider());
        providers.addStackTrace(new StackTraceJsonProvider());
        LoggingEventCompositeJsonEncoder encoder = new LoggingEventCompositeJsonEncoder();
        encoder.setContext(context);
        encoder.setProviders(providers);
        // Plain JSON needs no Jackson module: none is looked up on the class path.
        encoder.setFindAndRegisterJacksonModules(false);
        encoder.start();
        return encoder;
    }
}
