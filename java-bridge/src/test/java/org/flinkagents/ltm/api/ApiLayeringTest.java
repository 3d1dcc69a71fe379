package org.flinkagents.ltm.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The API package (what users import) never reaches the runtime package: no import, no class
 * reference in the compiled classes, not even a class name as a string. The runtime is found
 * through {@link AgentRuntime#load()} (a service loader) only.
 */
class ApiLayeringTest {
    private static final String RUNTIME = "org.flinkagents.ltm.runtime";

    @Test
    void testNoApiSourceFileMentionsTheRuntimePackage() throws IOException {
        Path sources = Paths.get("src/main/java/org/flinkagents/ltm/api");
        List<Path> files = files(sources, ".java");
        assertTrue(files.size() > 10, "the API's sources were not found under " + sources);
        List<String> offending = files.stream()
                .filter(f -> read(f).contains(RUNTIME))
                .map(Path::toString).collect(Collectors.toList());
        assertEquals(List.of(), offending, "API sources that name " + RUNTIME);
    }

    @Test
    void testNoCompiledApiClassRefersToARuntimeClass() throws Exception {
        Path classes = Paths.get(Agent.class.getProtectionDomain().getCodeSource().getLocation()
                .toURI()).resolve("org/flinkagents/ltm/api");
        List<Path> files = files(classes, ".class");
        assertTrue(files.size() > 10, "the API's classes were not found under " + classes);
        // A class file's constant pool holds every class it uses as org/flinkagents/..., and
        // every string constant as written (Latin-1 is enough to find ASCII names).
        List<String> offending = files.stream()
                .filter(f -> {
                    String pool = new String(bytes(f), StandardCharsets.ISO_8859_1);
                    return pool.contains(RUNTIME.replace('.', '/')) || pool.contains(RUNTIME);
                })
                .map(Path::toString).collect(Collectors.toList());
        assertEquals(List.of(), offending, "API classes that refer to " + RUNTIME);
    }

    private static List<Path> files(Path root, String suffix) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(p -> p.toString().endsWith(suffix)).sorted()
                    .collect(Collectors.toList());
        }
    }

    private static String read(Path file) {
        return new String(bytes(file), StandardCharsets.UTF_8);
    }

    private static byte[] bytes(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new IllegalStateException(file + " cannot be read: " + e, e);
        }
    }
}
