package org.flinkagents.ltm.api;

import java.io.File;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * Which Python Pemja embeds: the interpreter executable (a shared-libpython build; Pemja runs it
 * to locate libpython and its own native module) and the paths to put on {@code sys.path} (the
 * venv's site-packages, where {@code pemja} and {@code flink_agents_ltm} are importable).
 *
 * <p>{@link #fromEnvironment()} reads system properties {@code flink.agents.ltm.python} and
 * {@code flink.agents.ltm.pythonpath}, else environment variables {@code FLINK_AGENTS_LTM_PYTHON}
 * and {@code FLINK_AGENTS_LTM_PYTHONPATH}, else {@code python3} and no extra paths.
 */
public final class PythonSettings implements Serializable {
    private static final long serialVersionUID = 1L;

    private final String pythonExec;
    private final List<String> pythonPaths;

    public PythonSettings(String pythonExec, List<String> pythonPaths) {
        this.pythonExec = Objects.requireNonNull(pythonExec, "pythonExec");
        this.pythonPaths = Collections.unmodifiableList(new ArrayList<>(pythonPaths));
    }

    public static PythonSettings fromEnvironment() {
        String exec = setting("flink.agents.ltm.python", "FLINK_AGENTS_LTM_PYTHON", "python3");
        String path = setting("flink.agents.ltm.pythonpath", "FLINK_AGENTS_LTM_PYTHONPATH", "");
        return new PythonSettings(exec, splitPath(path));
    }

    public static List<String> splitPath(String path) {
        List<String> paths = new ArrayList<>();
        for (String part : path.split(File.pathSeparator)) {
            if (!part.isBlank()) {
                paths.add(part);
            }
        }
        return paths;
    }

    private static String setting(String property, String variable, String fallback) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank()) {
            value = System.getenv(variable);
        }
        return value == null || value.isBlank() ? fallback : value;
    }

    public String getPythonExec() {
        return pythonExec;
    }

    public List<String> getPythonPaths() {
        return pythonPaths;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PythonSettings
                && pythonExec.equals(((PythonSettings) o).pythonExec)
                && pythonPaths.equals(((PythonSettings) o).pythonPaths);
    }

    @Override
    public int hashCode() {
        return Objects.hash(pythonExec, pythonPaths);
    }

    @Override
    public String toString() {
        return "PythonSettings{exec='" + pythonExec + "', paths=" + pythonPaths + '}';
    }

    /** {@code paths} as an array (for Pemja's interpreter config). */
    public static String[] pathArray(List<String> paths) {
        return paths.toArray(new String[0]);
    }

    static List<String> of(String... paths) {
        return Arrays.asList(paths);
    }
}
