package org.flinkagents.ltm.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.flinkagents.ltm.runtime.memory.TestLtm;
import org.junit.jupiter.api.Test;

/**
 * The local run exactly as java-bridge/README.md shows it: {@code java-bridge/run-local} runs
 * MemoryAgentJob on a mini-cluster made of PyFlink's jars, in a JVM of its own.
 */
class LocalRunTest {

    @Test
    void testTheDocumentedLocalRunRemembersEachKeysNotesOnAMiniClusterOfPyFlinksJars()
            throws Exception {
        Path scratch = TestLtm.home().resolve(TestLtm.unique("local-run")).toAbsolutePath();
        Files.createDirectories(scratch);
        Path notes = scratch.resolve("notes.csv");
        Files.writeString(notes, "ann,ann likes green tea\nbob,bob had a late parcel\n"
                + "ann,ann asks about tea again\n", StandardCharsets.UTF_8);

        LocalRun run = LocalRun.run(scratch, Map.of(), "java-bridge/run-local",
                "--input", notes.toString(), "--base-dir", scratch.resolve("ltm").toString());

        assertEquals(0, run.exitCode, run.toString());
        Map<String, List<String>> itemsOfKey = new TreeMap<>();
        for (String[] line : run.resultLines()) {
            assertTrue(line[1].startsWith(line[0] + " "), String.join("\t", line));
            assertEquals("hits=" + line[1], line[2].split("\\|")[0], String.join("\t", line));
            assertEquals("observed=add,search,get", line[4]);
            itemsOfKey.computeIfAbsent(line[0], k -> new ArrayList<>()).add(line[3]);
        }
        assertEquals(Map.of("ann", List.of("items=1", "items=2"), "bob", List.of("items=1")),
                itemsOfKey, run.toString());
        assertTrue(run.stderr.contains("opened long-term memory"), run.toString());
    }
}
