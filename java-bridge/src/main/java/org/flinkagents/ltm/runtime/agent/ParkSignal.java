package org.flinkagents.ltm.runtime.agent;

/**
 * Unwinds an action that awaits a durable call not recorded yet. An {@link Error}, so that an
 * action's {@code catch (Exception e)} does not swallow it.
 */
final class ParkSignal extends Error {
    private static final long serialVersionUID = 1L;
    static final ParkSignal INSTANCE = new ParkSignal();

    private ParkSignal() {
        super("the action parked on a durable call", null, false, false);
    }
}
