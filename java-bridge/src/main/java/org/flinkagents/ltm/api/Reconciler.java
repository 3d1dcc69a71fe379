package org.flinkagents.ltm.api;

/**
 * Asks whether a durable call that a failure cut off mid-call had its side effect (the Java
 * twin of Python's {@code reconciler=} of {@code durable_execute_async}). With {@code
 * agents.action-state.store} on, each durable call writes a <i>started</i> marker before it runs
 * and its result as soon as it returns; a replay after a restore that finds the marker but no
 * result calls the call's reconciler instead of the call: it returns the call's result if the
 * side effect happened, or {@link #callAgain()} to run the call. If it throws, the call fails as
 * if the call had thrown. Without a reconciler such a call runs again (as without the store).
 *
 * <pre>{@code
 * String receipt = ctx.durableExecuteAsync(DurableCallable.of("charge", () -> card.charge(order),
 *         () -> card.findCharge(order.id()).orElse(Reconciler.callAgain())));
 * }</pre>
 *
 * It runs where the call would run (a worker thread for {@code durableExecuteAsync}), so it may
 * use what the call captured, never the {@link RunnerContext}.
 */
@FunctionalInterface
public interface Reconciler<T> {
    /** The call's result if its side effect happened, else {@link #callAgain()}. */
    T reconcile() throws Exception;

    /** What a reconciler returns to say "the side effect did not happen: call again". */
    Object CALL_AGAIN = CallAgain.INSTANCE;

    /** {@link #CALL_AGAIN}, typed for the reconciler's result. */
    @SuppressWarnings("unchecked")
    static <T> T callAgain() {
        return (T) CALL_AGAIN;
    }

    /** The one value of {@link #CALL_AGAIN}. */
    final class CallAgain implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        static final CallAgain INSTANCE = new CallAgain();

        private CallAgain() {}

        private Object readResolve() {
            return INSTANCE;
        }

        @Override
        public String toString() {
            return "CALL_AGAIN";
        }
    }
}
