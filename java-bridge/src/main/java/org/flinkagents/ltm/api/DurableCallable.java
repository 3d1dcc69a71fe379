package org.flinkagents.ltm.api;

import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * A call whose result is recorded in keyed state ({@link RunnerContext#durableExecute},
 * {@link RunnerContext#durableExecuteAsync}): after a failure, a replayed action gets the
 * recorded result (or exception) back instead of calling again. The result must be {@link
 * java.io.Serializable}. {@link #getId()} names the call; a replay checks that the action makes
 * the same calls in the same order.
 */
public interface DurableCallable<T> {
    String getId();

    T call() throws Exception;

    static <T> DurableCallable<T> of(String id, Callable<T> body) {
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
        };
    }
}
