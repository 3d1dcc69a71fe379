package org.flinkagents.ltm.runtime.agent;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Which run of a job a key's inputs belong to: the <i>incarnation</i> in every observation id,
 * as in the Python runtime ({@code flink_agents_ltm.runtime.incarnation}), character for
 * character.
 *
 * <p>A replay-stable item id derives from the observation id of the step that wrote it, and the
 * observation id from the key and the key's input counter (keyed state). A new submission of a
 * job without its state starts every counter at 0 again; were the id {@code key#seq#step} alone,
 * the new run's items would take the last run's ids and be upserted over them. So a key whose
 * counter starts in this submission names the submission too: its <b>line</b> of runs is
 * {@code key@<incarnation>}, the <b>place</b> of its input {@code seq} is {@code
 * <line>#<seq>}, the observation id of a step {@code <place>#<step>}. The incarnation is the
 * first 16 hex digits of the SHA-256 of the submission's name ({@link
 * org.flinkagents.ltm.api.JobSubmission}). State written before incarnations existed has the
 * {@link #LEGACY} incarnation, whose line is the key alone, as it was then.
 */
public final class Incarnation {
    /** Of state written before incarnations existed: places are {@code key#seq}. */
    public static final String LEGACY = "";
    /** Hex digits of the digest. */
    public static final int LENGTH = 16;

    private Incarnation() {}

    /** The incarnation of the submission named {@code submission}. */
    public static String of(String submission) {
        if (submission == null || submission.isEmpty()) {
            throw new IllegalArgumentException("a job submission needs a non-empty name");
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(submission.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest).substring(0, LENGTH);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM has no SHA-256: " + e, e);
        }
    }

    /** The key's line of runs in the incarnation: {@code key@<incarnation>} (legacy: {@code key}). */
    public static String line(Object key, String incarnation) {
        return LEGACY.equals(incarnation) ? String.valueOf(key) : key + "@" + incarnation;
    }

    /** The place of input {@code seq} of {@code key}: {@code <line>#<seq>}. */
    public static String place(Object key, String incarnation, long seq) {
        return line(key, incarnation) + "#" + seq;
    }

    /** The observation id of step {@code step} of input {@code seq}: {@code <place>#<step>}. */
    public static String observationId(Object key, String incarnation, long seq, int step) {
        return place(key, incarnation, seq) + "#" + step;
    }
}
