package org.flinkagents.ltm.runtime.memory;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.Appender;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

/**
 * Every log event of this JVM at every level, Java's and Python's (Pemja forwards Python's
 * logging to SLF4J), while open: the root logger is set to ALL and its own appenders are
 * detached meanwhile (so the console stays quiet), then restored on {@link #close}.
 */
public final class CapturedLogs implements AutoCloseable {
    private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
    private final LoggerContext context = (LoggerContext) LogManager.getContext(false);
    private final LoggerConfig root = context.getConfiguration().getRootLogger();
    private final Level level = root.getLevel();
    private final Map<String, Appender> detached = root.getAppenders();
    private final Appender appender;

    public CapturedLogs() {
        appender = new AbstractAppender("captured-" + UUID.randomUUID(), null, null, true,
                Property.EMPTY_ARRAY) {
            @Override
            public void append(LogEvent event) {
                StringWriter line = new StringWriter();
                line.append(event.getLevel().name()).append(' ').append(event.getLoggerName())
                        .append(' ').append(event.getMessage().getFormattedMessage());
                if (event.getThrown() != null) {
                    line.append('\n');
                    event.getThrown().printStackTrace(new PrintWriter(line));
                }
                lines.add(line.toString());
            }
        };
        appender.start();
        detached.keySet().forEach(root::removeAppender);
        root.addAppender(appender, Level.ALL, null);
        root.setLevel(Level.ALL);
        context.updateLoggers();
    }

    /** The lines logged so far (level, logger, message and any stack trace). */
    public List<String> lines() {
        synchronized (lines) {
            return new ArrayList<>(lines);
        }
    }

    @Override
    public void close() {
        root.removeAppender(appender.getName());
        detached.values().forEach(a -> root.addAppender(a, null, null));
        root.setLevel(level);
        context.updateLoggers();
        appender.stop();
    }
}
