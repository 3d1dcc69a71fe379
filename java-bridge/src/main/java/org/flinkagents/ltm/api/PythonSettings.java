package org.flinkagents.ltm.api;

import java.io.File;
import java.io.Serializable;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.CodeSource;
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
 * and {@code FLINK_AGENTS_LTM_PYTHONPATH}; without them, the Python that installed the wheel this
 * class was loaded from (the jar {@code flink-agents-ltm java-classpath} names lies in
 * {@code <venv>/lib/python3.X/site-packages/flink_agents_ltm/java/}): that venv's
 * {@code bin/python} and its site-packages. Otherwise it throws one line naming the two variables.
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
        String exec = setting("flink.agents.ltm.python", "FLINK_AGENTS_LTM_PYTHON", "");
        String path = setting("flink.agents.ltm.pythonpath", "FLINK_AGENTS_LTM_PYTHONPATH", "");
        if (!exec.isEmpty()) {
            return new PythonSettings(exec, splitPath(path));
        }
        Path jar = ownJar();
        PythonSettings installed = jar == null ? null : ofInstalledJar(jar);
        if (installed == null) {
            throw new IllegalStateException("no Python for long-term memory: set FLINK_AGENTS_LTM_PYTHON"
                    + " to the venv's python that has flink-agents-ltm installed (and"
                    + " FLINK_AGENTS_LTM_PYTHONPATH to its site-packages), or put the jar that"
                    + " 'flink-agents-ltm java-classpath' prints on the class path");
        }
        List<String> paths = new ArrayList<>(installed.pythonPaths);
        paths.addAll(splitPath(path));
        return new PythonSettings(installed.pythonExec, paths);
    }

    /**
     * The settings of the venv whose site-packages hold {@code jar} as
     * {@code flink_agents_ltm/java/<jar>} (a pip-installed wheel), or {@code null}.
     */
    public static PythonSettings ofInstalledJar(Path jar) {
        Path java = jar.toAbsolutePath().getParent();
        Path pkg = java == null ? null : java.getParent();
        Path site = pkg == null ? null : pkg.getParent();
        if (site == null || !"java".equals(java.getFileName().toString())
                || !"flink_agents_ltm".equals(pkg.getFileName().toString())) {
            return null;
        }
        // <venv>/lib/python3.X/site-packages (POSIX) or <venv>/Lib/site-packages (Windows)
        for (Path venv = site.getParent(); venv != null; venv = venv.getParent()) {
            if (Files.isRegularFile(venv.resolve("pyvenv.cfg"))) {
                for (String exec : List.of("bin/python", "Scripts/python.exe")) {
                    Path python = venv.resolve(exec);
                    if (Files.isExecutable(python)) {
                        return new PythonSettings(python.toString(), List.of(site.toString()));
                    }
                }
                return null;
            }
        }
        return null;
    }

    private static Path ownJar() {
        try {
            CodeSource source = PythonSettings.class.getProtectionDomain().getCodeSource();
            if (source == null || source.getLocation() == null) {
                return null;
            }
            Path location = Paths.get(source.getLocation().toURI());
            return Files.isRegularFile(location) ? location : null;
        } catch (URISyntaxException | SecurityException | IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * The extra import paths the environment names ({@code flink.agents.ltm.pythonpath}, else
     * {@code FLINK_AGENTS_LTM_PYTHONPATH}), for a Python given another way.
     */
    public static List<String> environmentPaths() {
        return splitPath(setting("flink.agents.ltm.pythonpath", "FLINK_AGENTS_LTM_PYTHONPATH", ""));
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
