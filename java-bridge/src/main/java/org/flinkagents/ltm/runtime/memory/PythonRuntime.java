package org.flinkagents.ltm.runtime.memory;

import org.flinkagents.ltm.api.PythonSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import pemja.core.PythonInterpreter;
import pemja.core.PythonInterpreterConfig;

/**
 * The embedded Python of this JVM, reached through one Pemja {@link PythonInterpreter} per
 * thread.
 *
 * <p>Pemja 0.5.7 rules this class follows. An interpreter (MULTI_THREAD mode: one CPython
 * thread state with its own globals, all sharing one CPython, its modules and objects) is used
 * only by the thread that created it. Calls go through {@code invokeMethod} on an object bound
 * in the interpreter's globals, never {@code invoke(name)}, which may call a stale function once
 * another interpreter was closed (a SIGSEGV inside a TaskManager).
 *
 * <p>Release: every interpreter is tracked, whichever thread made it. An interpreter is closed
 * on its own thread ({@link #closeCurrentThreadInterpreter}, which the threads of {@link
 * #threadFactory} call when they end), or from any other thread once its thread has ended
 * ({@link #closeInterpretersOfEndedThreads}, also run whenever an interpreter is created and
 * when a gateway is released). Closing only touches the interpreter's thread state, and an ended
 * thread can never use it again; a live thread's interpreter is never closed from another
 * thread (its thread may be inside a call, and CPython remembers the thread state as that
 * thread's own). Likewise {@link #releaseGateway} unbinds a closed memory's gateway at once in
 * the calling thread, by closing the interpreters of ended threads, and in every other live
 * thread at that thread's next call.
 */
public final class PythonRuntime {
    private static final Logger LOG = LoggerFactory.getLogger(PythonRuntime.class);
    private static final ConcurrentHashMap<PythonSettings, PythonRuntime> RUNTIMES =
            new ConcurrentHashMap<>();

    /** The module every interpreter imports under this name. */
    static final String GATEWAY_MODULE = "_flink_agents_ltm_gateway";

    /**
     * Pemja keeps the bound method it called last (a per-interpreter cache, replaced by the
     * next {@code invokeMethod} with arguments), which keeps its object alive. Calling {@code
     * str.lower("")} through this name drops that reference when a gateway is unbound.
     */
    private static final String CACHE_RESET = "_flink_agents_ltm_cache_reset";

    private final PythonSettings settings;
    private final ThreadLocal<ThreadInterpreter> interpreters = new ThreadLocal<>();
    private final Set<ThreadInterpreter> open = ConcurrentHashMap.newKeySet();

    private PythonRuntime(PythonSettings settings) {
        this.settings = settings;
    }

    /** The runtime for these settings (one per settings per JVM). */
    public static PythonRuntime get(PythonSettings settings) {
        return RUNTIMES.computeIfAbsent(settings, PythonRuntime::new);
    }

    public PythonSettings getSettings() {
        return settings;
    }

    /**
     * The calling thread's interpreter, created (and the gateway module imported) on first use.
     * Unbinds first the gateways released since this thread's last call.
     */
    ThreadInterpreter current() {
        ThreadInterpreter interpreter = interpreters.get();
        if (interpreter == null) {
            interpreter = new ThreadInterpreter(start(), Thread.currentThread());
            interpreters.set(interpreter);
            open.add(interpreter);
            closeInterpretersOfEndedThreads();
        }
        interpreter.unbindReleased();
        return interpreter;
    }

    private PythonInterpreter start() {
        PythonInterpreterConfig config =
                PythonInterpreterConfig.newBuilder()
                        .setPythonExec(settings.getPythonExec())
                        .addPythonPaths(PythonSettings.pathArray(settings.getPythonPaths()))
                        .setExcType(PythonInterpreterConfig.ExecType.MULTI_THREAD)
                        .build();
        PythonInterpreter created;
        try {
            created = new PythonInterpreter(config);
        } catch (Exception e) { // pemja.core.PythonException is checked but thrown undeclared
            throw new IllegalStateException(
                    "could not start the embedded Python (" + settings + "): " + e.getMessage(),
                    e);
        }
        try {
            created.exec("import flink_agents_ltm.bridge.java_gateway as " + GATEWAY_MODULE);
            created.exec(CACHE_RESET + " = str");
        } catch (Exception e) {
            created.close();
            throw new IllegalStateException(
                    "could not import flink_agents_ltm in the embedded Python (" + settings
                            + "); put the venv's site-packages on the python path: "
                            + e.getMessage(),
                    e);
        }
        return created;
    }

    /**
     * Calls {@code module.function(args)} in the calling thread's interpreter (through {@code
     * invokeMethod} on the imported module) and returns the converted result.
     */
    public Object call(String module, String function, Object... args) {
        ThreadInterpreter interpreter = current();
        String alias = "_module_" + module.replaceAll("[^A-Za-z0-9_]", "_");
        if (interpreter.bound.add(alias)) {
            try {
                interpreter.interpreter.exec("import " + module + " as " + alias);
            } catch (Exception e) { // pemja.core.PythonException is checked but thrown undeclared
                interpreter.bound.remove(alias);
                throw new IllegalStateException(
                        "could not import " + module + ": " + e.getMessage(), e);
            }
        }
        return interpreter.invokeMethod(alias, function, args);
    }

    /**
     * Closes the calling thread's interpreter, if it has one. Call it on threads that end (the
     * worker threads of {@link #threadFactory}, an operator's {@code close}).
     */
    public void closeCurrentThreadInterpreter() {
        ThreadInterpreter interpreter = interpreters.get();
        if (interpreter != null) {
            interpreters.remove();
            close(interpreter);
        }
    }

    /**
     * Closes the interpreters whose threads have ended (threads that called Python and ended
     * without closing theirs: pools not made by {@link #threadFactory}, short-lived threads).
     * Safe from any thread: an ended thread can never use its interpreter again.
     *
     * @return how many were closed
     */
    public int closeInterpretersOfEndedThreads() {
        int closed = 0;
        for (ThreadInterpreter interpreter : open) {
            if (!interpreter.owner.isAlive() && close(interpreter)) {
                closed++;
            }
        }
        if (closed > 0) {
            LOG.debug("closed {} Python interpreter(s) of ended threads", closed);
        }
        return closed;
    }

    /** The names of the threads whose interpreters are open, one entry per interpreter. */
    public List<String> interpreterThreads() {
        List<String> names = new ArrayList<>();
        for (ThreadInterpreter interpreter : open) {
            names.add(interpreter.owner.getName());
        }
        return names;
    }

    /**
     * Releases the gateway bound as {@code variable} (a closed memory) in every interpreter:
     * now in the calling thread's, by closing the interpreters of ended threads, and at their
     * next call in the others (never from a foreign thread while its owner lives).
     */
    void releaseGateway(String variable) {
        Thread caller = Thread.currentThread();
        for (ThreadInterpreter interpreter : open) {
            if (interpreter.owner == caller) {
                interpreter.unbindGateway(variable);
            } else if (interpreter.owner.isAlive()) {
                interpreter.releaseLater(variable);
            }
        }
        closeInterpretersOfEndedThreads();
    }

    /** Closes {@code interpreter} unless someone else already did; true if this call did. */
    private boolean close(ThreadInterpreter interpreter) {
        if (!open.remove(interpreter)) {
            return false;
        }
        interpreter.interpreter.close();
        return true;
    }

    /** Threads that close their interpreter when they end. */
    public ThreadFactory threadFactory(String namePrefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread =
                    new Thread(
                            () -> {
                                try {
                                    runnable.run();
                                } finally {
                                    closeCurrentThreadInterpreter();
                                }
                            },
                            namePrefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /**
     * One thread's interpreter, the names bound in its globals, and the gateways to unbind at
     * its thread's next call. Only {@link #owner} calls the interpreter.
     */
    static final class ThreadInterpreter {
        final PythonInterpreter interpreter;
        final Thread owner;
        final Set<String> bound = ConcurrentHashMap.newKeySet();
        private final Set<String> released = ConcurrentHashMap.newKeySet();

        ThreadInterpreter(PythonInterpreter interpreter, Thread owner) {
            this.interpreter = interpreter;
            this.owner = owner;
        }

        Object invokeMethod(String object, String method, Object... args) {
            return interpreter.invokeMethod(object, method, args);
        }

        /** Binds {@code variable} to the Python gateway behind {@code handle}, once. */
        void bindGateway(String variable, String handle) {
            if (bound.add(variable)) {
                try {
                    interpreter.exec(
                            variable + " = " + GATEWAY_MODULE + ".gateway('" + handle + "')");
                } catch (Exception e) { // pemja.core.PythonException, thrown undeclared
                    bound.remove(variable);
                    throw new IllegalStateException(
                            "no Python long-term memory '" + handle + "': " + e.getMessage(), e);
                }
            }
        }

        /** On the owner thread: drops the binding (the gateway can then be freed). */
        void unbindGateway(String variable) {
            released.remove(variable);
            if (bound.remove(variable)) {
                interpreter.exec("globals().pop('" + variable + "', None)");
                interpreter.invokeMethod(CACHE_RESET, "lower", "");
            }
        }

        /** From another thread: the owner unbinds {@code variable} at its next call. */
        void releaseLater(String variable) {
            if (bound.contains(variable)) {
                released.add(variable);
            }
        }

        void unbindReleased() {
            if (!released.isEmpty()) {
                for (String variable : new ArrayList<>(released)) {
                    unbindGateway(variable);
                }
            }
        }
    }
}
