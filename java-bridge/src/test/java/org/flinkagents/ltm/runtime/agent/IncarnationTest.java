package org.flinkagents.ltm.runtime.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.configuration.Configuration;
import org.flinkagents.ltm.api.JobSubmission;
import org.junit.jupiter.api.Test;

/**
 * The Java runtime names a job's runs as the Python runtime does: the same golden values as
 * {@code tests/runtime/test_incarnation.py}, so that the two cannot drift apart.
 */
class IncarnationTest {
    static final String SUBMISSION = "a1b2c3d4e5f60718293a4b5c6d7e8f90";

    @Test
    void testTheIncarnationIsTheFirst16HexDigitsOfTheSha256OfTheSubmissionAsInPython() {
        assertEquals("ff25d2389ab7917a", Incarnation.of(SUBMISSION));
    }

    @Test
    void testObservationIdsNameTheKeysLineInTheIncarnationAsInPython() {
        assertEquals("alice@d2b1e5cfa5a0ec34#3#1",
                Incarnation.observationId("alice", "d2b1e5cfa5a0ec34", 3, 1));
        assertEquals("alice@d2b1e5cfa5a0ec34#3", Incarnation.place("alice", "d2b1e5cfa5a0ec34", 3));
        assertEquals("alice@d2b1e5cfa5a0ec34", Incarnation.line("alice", "d2b1e5cfa5a0ec34"));
    }

    @Test
    void testTheLegacyIncarnationKeepsTheIdsOfStateWrittenBeforeIncarnations() {
        assertEquals("alice#3#1", Incarnation.observationId("alice", Incarnation.LEGACY, 3, 1));
        assertEquals("alice", Incarnation.line("alice", Incarnation.LEGACY));
    }

    @Test
    void testASubmissionWithoutANameIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Incarnation.of(""));
        assertThrows(IllegalArgumentException.class, () -> new JobSubmission(" ", null));
    }

    @Test
    void testTheSubmissionIsTheJobIdTheDeploymentFixedElseAFreshUuid() {
        Configuration fixed = new Configuration();
        fixed.setString("$internal.pipeline.job-id", " " + SUBMISSION + " ");
        fixed.setString("execution.savepoint.path", "file:///tmp/sp-1");
        JobSubmission named = JobSubmission.of(fixed);
        assertEquals(SUBMISSION, named.name(), "the job id, trimmed");
        assertEquals("file:///tmp/sp-1", named.restorePath());

        Configuration blank = new Configuration();
        blank.setString("$internal.pipeline.job-id", "  ");
        JobSubmission first = JobSubmission.of(blank);
        JobSubmission second = JobSubmission.of(new Configuration());
        assertTrue(first.name().matches("[0-9a-f]{32}"), first.name());
        assertNotEquals(first.name(), second.name(), "each unnamed submission is new");
        assertNull(second.restorePath());
    }
}
