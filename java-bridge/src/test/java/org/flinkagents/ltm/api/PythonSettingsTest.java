package org.flinkagents.ltm.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PythonSettings finds the Python that installed the wheel its jar came from, or says in one
 *  line which two variables to set. */
class PythonSettingsTest {

    @Test
    void aJarInsideAVenvsInstalledPackageGivesThatVenvsPythonAndSitePackages(@TempDir Path venv)
            throws Exception {
        Path site = venv.resolve("lib/python3.11/site-packages");
        Path jar = site.resolve("flink_agents_ltm/java/flink-agents-ltm-bridge.jar");
        Files.createDirectories(jar.getParent());
        Files.writeString(jar, "");
        Files.writeString(venv.resolve("pyvenv.cfg"), "home = /usr/bin\n");
        Path python = venv.resolve("bin/python");
        Files.createDirectories(python.getParent());
        Files.writeString(python, "#!/bin/sh\n");
        Files.setPosixFilePermissions(python, PosixFilePermissions.fromString("rwxr-xr-x"));

        PythonSettings found = PythonSettings.ofInstalledJar(jar);

        assertEquals(new PythonSettings(python.toString(), List.of(site.toString())), found);
    }

    @Test
    void aJarElsewhereGivesNothing(@TempDir Path folder) throws Exception {
        Files.writeString(folder.resolve("pyvenv.cfg"), "");
        assertNull(PythonSettings.ofInstalledJar(folder.resolve("target/bridge.jar")));
        assertNull(PythonSettings.ofInstalledJar(
                folder.resolve("lib/site-packages/flink_agents_ltm/java/bridge.jar")));  // no python
    }

    @Test
    void withoutSettingsOrAnInstalledJarItFailsWithOneLineNamingBothVariables() {
        String saved = System.clearProperty("flink.agents.ltm.python");
        try {
            // the classes run from target/classes here, not from an installed wheel's jar
            IllegalStateException error =
                    assertThrows(IllegalStateException.class, PythonSettings::fromEnvironment);
            assertTrue(error.getMessage().contains("FLINK_AGENTS_LTM_PYTHON ")
                    && error.getMessage().contains("FLINK_AGENTS_LTM_PYTHONPATH"), error.getMessage());
            assertEquals(1, error.getMessage().lines().count());
        } finally {
            if (saved != null) {
                System.setProperty("flink.agents.ltm.python", saved);
            }
        }
    }
}
