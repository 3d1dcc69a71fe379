package org.flinkagents.ltm.runtime.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Base64;

import org.apache.flink.util.InstantiationUtil;
import org.junit.jupiter.api.Test;

/** The run record's Java serialization across versions of {@link RunRecord.RecordedCall}. */
class RunRecordTest {
    /**
     * A run record as the operator before {@code RecordedCall.storedItems} wrote it: one
     * recorded call ("store", result bytes {1, 2}), keepsCounter false (Java-serialized with
     * that version's classes, Base64).
     */
    static final String RECORDED_BEFORE_STORED_ITEMS =
            "rO0ABXNyACtvcmcuZmxpbmthZ2VudHMubHRtLnJ1bnRpbWUuYWdlbnQuUnVuUmVjb3JkAAAAAAAAAAECAAdaAAxrZWVwc0NvdW50ZXJKAAlwb2xsVGltZXJMAAVjYWxsc3QAFUxqYXZhL3V0aWwvQXJyYXlMaXN0O0wAB291dHB1dHNxAH4AAUwAB3NlbnNvcnl0ABNMamF2YS91dGlsL0hhc2hNYXA7TAAJc2hvcnRUZXJtcQB+AAJMAAVzdGVwc3EAfgABeHAA//////////9zcgATamF2YS51dGlsLkFycmF5TGlzdHiB0h2Zx2GdAwABSQAEc2l6ZXhwAAAAAXcEAAAAAXNyADhvcmcuZmxpbmthZ2VudHMubHRtLnJ1bnRpbWUuYWdlbnQuUnVuUmVjb3JkJFJlY29yZGVkQ2FsbAAAAAAAAAABAgADWgAGZmFpbGVkTAACaWR0ABJMamF2YS9sYW5nL1N0cmluZztbAAZyZXN1bHR0AAJbQnhwAHQABXN0b3JldXIAAltCrPMX+AYIVOACAAB4cAAAAAIBAnhzcQB+AAQAAAAAdwQAAAAAeHNyABFqYXZhLnV0aWwuSGFzaE1hcAUH2sHDFmDRAwACRgAKbG9hZEZhY3RvckkACXRocmVzaG9sZHhwP0AAAAAAAAB3CAAAABAAAAAAeHNxAH4ADj9AAAAAAAAAdwgAAAAQAAAAAHhzcQB+AAQAAAAAdwQAAAAAeA==";

    private static RunRecord roundTrip(RunRecord record) throws Exception {
        return InstantiationUtil.deserializeObject(InstantiationUtil.serializeObject(record),
                RunRecordTest.class.getClassLoader());
    }

    @Test
    void testACallRecordedBeforeTheFieldExistedRestoresAsMayHaveStoredItems() throws Exception {
        RunRecord old = InstantiationUtil.deserializeObject(
                Base64.getDecoder().decode(RECORDED_BEFORE_STORED_ITEMS),
                RunRecordTest.class.getClassLoader());

        assertEquals(1, old.calls.size());
        RunRecord.RecordedCall call = old.calls.get(0);
        assertEquals("store", call.id);
        assertEquals(2, call.result.length);
        assertFalse(old.keepsCounter);
        assertNull(call.storedItems, "the field is missing from the old stream");
        assertTrue(call.mayHaveStoredItems() && old.callsStoredItems(),
                "an old record cannot say: its key keeps its input counter after a restore");
    }

    @Test
    void testARecordedCallKeepsWhetherItStoredItems() throws Exception {
        RunRecord record = new RunRecord();
        record.calls.add(new RunRecord.RecordedCall("look", new byte[0], false, null)
                .storing(false));
        assertFalse(roundTrip(record).callsStoredItems(), "a read-only call");

        record.calls.add(new RunRecord.RecordedCall("store", new byte[0], false, null)
                .storing(true));
        RunRecord back = roundTrip(record);
        assertEquals(Boolean.FALSE, back.calls.get(0).storedItems);
        assertEquals(Boolean.TRUE, back.calls.get(1).storedItems);
        assertTrue(back.callsStoredItems());
    }
}
