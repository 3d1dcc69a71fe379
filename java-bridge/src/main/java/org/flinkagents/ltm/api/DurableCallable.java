package org.flinkagents.ltm.api;

import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * A call whose result is recorded in keyed state ({@link RunnerContext#durableExecute},
 * {@link RunnerContext#durableExecuteAsync}): after a failure, a replayed action gets the
 * recorded result (or exception) back instead of calling again. The result must be {@link
 * java.io.Serializable}. {@link #getId()} names the call; a replay checks that the action makes
 * the same calls in the same order.
 *
 * <p>With {@code agents.action-state.store} on, the call is also written ahead to a store outside
 * Flink's checkpoints, so that a call that completed after the last checkpoint is answered from
 * there after a restore; {@link #getReconciler()} decides about a call a failure cut off.
 */
public interface DurableCallable<T> {
    String getId();

    T call() throws Exception;

    /**
     * What a replay asks about this call when the action-state store holds its started marker
     * but no result (a failure cut it off mid-call); {@code null} (the default): run it again.
     */
    default Reconciler<T> getReconciler() {
        return null;
    }

    /** This call, with {@code reconciler} deciding about an attempt a failure cut off. */
    default DurableCallable<T> withReconciler(Reconciler<T> reconciler) {
        return of(getId(), this::call, reconciler);
    }

    static <T> DurableCallable<T> of(String id, Callable<T> body) {
        return of(id, body, null);
    }

    /** A call with a {@link Reconciler} ({@code null}: none). */
    static <T> DurableCallable<T> of(String id, Callable<T> body, Reconciler<T> reconciler) {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(body, "body");
        return new DurableCallable<>() {
            @Override
            public String getId() {
                return id;
            }

            @Override
            public T call() throws Exception {
                return body.call();
            }

            @Override
            public Reconciler<T> getReconciler() {
                return reconciler;
            }
        };
    }
}
