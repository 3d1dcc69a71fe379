package org.flinkagents.ltm.runtime.memory;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

import pemja.core.PythonInterpreter;
import pemja.core.PythonInterpreterConfig;

/**
 * The embedded Python of this JVM, reached through one Pemja {@link PythonInterpreter} per
 * thread.
 *
 * <p>Pemja 0.5.7 rules this class follows: an interpreter is used only by the thread that
 * created it (MULTI_THREAD mode: all interpreters share one CPython, its modules and objects,
 * each with its own globals); calls go through {@code invokeMethod} on an object bound in the
 * interpreter's globals, never {@code invoke(name)}, which may call a stale function once another
 * interpreter was closed (a SIGSEGV inside a TaskManager).
 */
public final class PythonRuntime {
    private static final ConcurrentHashMap<PythonSettings, PythonRuntime> RUNTIMES =
            new ConcurrentHashMap<>();

    /** The module every interpreter imports under this name. */
    static final String GATEWAY_MODULE = "_flink_agents_ltm_gateway";

    private final PythonSettings settings;
    private final ThreadLocal<ThreadInterpreter> interpreters = new ThreadLocal<>();

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

    /** The calling thread's interpreter, created (and the gateway module imported) on first use. */
    ThreadInterpreter current() {
        ThreadInterpreter interpreter = interpreters.get();
        if (interpreter == null) {
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
                        "could not start the embedded Python (" + settings + "): "
                                + e.getMessage(), e);
            }
            try {
                created.exec(
                        "import flink_agents_ltm.bridge.java_gateway as " + GATEWAY_MODULE);
            } catch (Exception e) {
                created.close();
                throw new IllegalStateException(
                        "could not import flink_agents_ltm in the embedded Python (" + settings
                                + "); put the venv's site-packages on the python path: "
                                + e.getMessage(), e);
            }
            interpreter = new ThreadInterpreter(created);
            interpreters.set(interpreter);
        }
        return interpreter;
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
            interpreter.interpreter.close();
        }
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

    /** One thread's interpreter and the gateways already bound in its globals. */
    static final class ThreadInterpreter {
        final PythonInterpreter interpreter;
        final Set<String> bound = new HashSet<>();

        ThreadInterpreter(PythonInterpreter interpreter) {
            this.interpreter = interpreter;
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

        void unbindGateway(String variable) {
            if (bound.remove(variable)) {
                interpreter.exec(variable + " = None");
            }
        }
    }
}
