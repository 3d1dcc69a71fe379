package org.flinkagents.ltm.api;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a method of an {@link Agent} as an action: {@code public void name(Event event,
 * RunnerContext ctx)}, run on the operator's mailbox thread for every event of one of the
 * {@link #listenEvents()} classes (exact class). Several actions listening to one event run in
 * the order of their names.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
public @interface Action {
    Class<? extends Event>[] listenEvents();
}
