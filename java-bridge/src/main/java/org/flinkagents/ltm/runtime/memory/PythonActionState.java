package org.flinkagents.ltm.runtime.memory;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.flinkagents.ltm.api.memory.LongTermMemoryException;

/**
 * The action-state store of one Java operator subtask: Python's journal ({@code
 * flink_agents_ltm.runtime.action_state}), reached through Pemja ({@code
 * flink_agents_ltm.bridge.action_state}). The stores (SQLite, PostgreSQL, yours), their rows,
 * run tags and pruning exist once, in Python; Java hands over plain values and gets plain
 * values back. Results are Java-serialized bytes, opaque to Python.
 *
 * <p>Threads: everything on the operator's mailbox thread, but {@link #started}, {@link
 * #completed} and {@link #abandoned}, which the thread running the call calls (each thread uses
 * its own interpreter of {@link PythonRuntime}). No message of this class carries a result, an
 * argument or a secret of the options (they are masked, {@link ConfigSecrets}).
 */
public final class PythonActionState implements AutoCloseable {
    static final String MODULE = "flink_agents_ltm.bridge.action_state";
    /** The option naming the store (the Python key, so one setting covers both languages). */
    public static final String STORE = "agents.action-state.store";
    /** Options of the store that Java hands over from the Flink configuration. */
    public static final String PREFIX = "agents.action-state.";
    public static final String JOB_ID = "agents.job-id";

    /** What the store holds for a call. */
    public enum State { RESULT, STARTED, MISSING }

    /** A lookup's answer: the state and, for {@link State#RESULT}, the result's bytes. */
    public record Found(State state, byte[] result) {}

    /** The run whose rows serve an input ({@code line}: the key's line of runs). */
    public record RunTag(String line, String run, long seq, String fingerprint,
            boolean hasRows) implements java.io.Serializable {}

    private final PythonRuntime python;
    private final String handle;
    private final ConfigSecrets secrets;
    private volatile boolean closed;

    private PythonActionState(PythonRuntime python, String handle, ConfigSecrets secrets) {
        this.python = python;
        this.handle = handle;
        this.secrets = secrets;
    }

    /** Whether {@code options} turn the store on (a value of {@link #STORE} other than none). */
    public static boolean wanted(Map<String, ?> options) {
        Object store = options == null ? null : options.get(STORE);
        return store != null && !String.valueOf(store).trim().isEmpty()
                && !"none".equals(String.valueOf(store).trim());
    }

    /**
     * Opens the journal the options name ({@code agents.action-state.*}, {@code agents.job-id},
     * and the long-term memory's options, which the PostgreSQL store reads), or null when
     * the store is {@code none}. {@code firstAttempt}: the task's first attempt (a later one
     * looks its rows up).
     */
    public static PythonActionState open(PythonRuntime python, Map<String, Object> options,
            int subtask, boolean firstAttempt, String incarnation) {
        ConfigSecrets secrets = ConfigSecrets.of(options);
        Object handle = call(python, secrets, "open_action_state", new HashMap<>(options),
                subtask, firstAttempt, incarnation);
        return handle == null ? null : new PythonActionState(python, (String) handle, secrets);
    }

    /** The store the options name, checked by Python's rules (on the client, before submit). */
    public static String storeName(PythonRuntime python, Map<String, Object> options) {
        ConfigSecrets secrets = ConfigSecrets.of(options);
        return String.valueOf(call(python, secrets, "store_name", new HashMap<>(options)));
    }

    /** The run whose rows serve the input ({@code fingerprint}) at place {@code seq}. */
    public RunTag runOf(String key, String incarnation, long seq, String fingerprint) {
        List<?> tag = (List<?>) forward("run_of", key, incarnation, seq, fingerprint);
        return new RunTag((String) tag.get(0), (String) tag.get(1), seq, fingerprint,
                (Boolean) tag.get(2));
    }

    /** What the store holds for the call at {@code position} of the step's observation. */
    public Found replay(String observation, String position, String name) {
        List<?> found = (List<?>) forward("replay", observation, position, name);
        String state = (String) found.get(0);
        switch (state) {
            case "result":
                return new Found(State.RESULT, (byte[]) found.get(1));
            case "started":
                return new Found(State.STARTED, null);
            default:
                return new Found(State.MISSING, null);
        }
    }

    /** The call's write-ahead: a token for {@link #started} and {@link #completed}. */
    public String start(RunTag tag, String observation, String position, String name) {
        return (String) forward("start", tag.line(), tag.run(), tag.seq(), tag.fingerprint(),
                observation, position, name);
    }

    /** Just before the call runs (on its thread): its started marker. */
    public void started(String token) {
        forward("started", token);
    }

    /** Just after the call returned (on its thread): its result. */
    public void completed(String token, byte[] result) {
        forward("completed", token, result);
    }

    /** The call raised or never ran: its marker stays (a replay asks its reconciler). */
    public void abandoned(String token) {
        forward("abandoned", token);
    }

    public void stepDone(String observation) {
        forward("step_done", observation);
    }

    public void checkpointStarted(long checkpointId) {
        forward("checkpoint_started", checkpointId);
    }

    /** Prunes what the checkpoint covers; answers how many rows went. */
    public int checkpointCompleted(long checkpointId) {
        return ((Number) forward("checkpoint_completed", checkpointId)).intValue();
    }

    public void restored(long checkpointId) {
        forward("restored", checkpointId);
    }

    /** Writes the pending done marks and closes the store. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        call(python, secrets, "close_action_state", handle);
    }

    private Object forward(String function, Object... args) {
        if (closed) {
            throw new IllegalStateException("action-state store " + handle + " is closed");
        }
        Object[] all = new Object[args.length + 1];
        all[0] = handle;
        System.arraycopy(args, 0, all, 1, args.length);
        return call(python, secrets, function, all);
    }

    private static Object call(PythonRuntime python, ConfigSecrets secrets, String function,
            Object... args) {
        Object answer;
        try {
            answer = python.call(MODULE, function, args);
        } catch (Exception e) { // runtime ones, and pemja's PythonException (checked, undeclared)
            throw new LongTermMemoryException("the action-state store's " + function
                    + " through Pemja failed: " + secrets.scrub(String.valueOf(e.getMessage())),
                    null, new PythonLongTermMemory.PythonTraceback(secrets.scrub(String.valueOf(e))));
        }
        if (answer instanceof Map && String.valueOf(((Map<?, ?>) answer).get("type"))
                .endsWith("NonDeterministicReplayError")) {
            throw new ReplayMismatch(secrets.scrub(String.valueOf(((Map<?, ?>) answer).get("message"))));
        }
        return PythonLongTermMemory.unwrap(answer, secrets);
    }

    /** The store holds another call at this position (the runtime's exception wraps it). */
    public static final class ReplayMismatch extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ReplayMismatch(String message) {
            super(message);
        }
    }
}
