package org.flinkagents.ltm.runtime.memory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.JsonProcessingException;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.TextNode;

/**
 * The secrets inside a long-term memory configuration (passwords, API keys, connection strings
 * and the password inside a {@code scheme://user:password@host} URL), so that Java never prints
 * them: {@link #redact} gives a printable copy with them masked, {@link #scrub} masks them in any
 * text (a Python error message forwarded to Java, a traceback).
 *
 * <p>A value is secret when its key names one ({@link #isSecretName}); the vector store may be
 * given as JSON text, whose fields are looked at the same way.
 */
public final class ConfigSecrets {
    /** What a secret is replaced with. */
    public static final String MASK = "***";

    private static final ObjectMapper JSON = new ObjectMapper();
    /** The table of secret keys the Python package reads too (copied into the jar). */
    static final String TABLE = "/org/flinkagents/ltm/secret_keys.json";
    private static final Pattern SECRET_KEY = secretKeyPattern();
    private static final Pattern URL_PASSWORD = Pattern.compile("://[^:/?#@\\s]*:([^@/\\s]+)@");
    private static final Pattern DSN_PASSWORD =
            Pattern.compile("(?i)\\bpassword\\s*=\\s*('[^']*'|[^\\s;]+)");
    private static final ConfigSecrets NONE = new ConfigSecrets(List.of());

    private final List<String> values; // longest first, so that a secret inside another goes too

    private ConfigSecrets(List<String> values) {
        this.values = values;
    }

    /** The secrets of {@code config} (option keys to values; JSON text is looked into). */
    public static ConfigSecrets of(Map<String, ?> config) {
        if (config == null || config.isEmpty()) {
            return NONE;
        }
        Set<String> found = new LinkedHashSet<>();
        for (Map.Entry<String, ?> entry : config.entrySet()) {
            Object value = entry.getValue();
            boolean secret = isSecretName(entry.getKey());
            if (value instanceof String && looksLikeJson((String) value)) {
                try {
                    collect(JSON.readTree((String) value), secret, found);
                } catch (JsonProcessingException e) {
                    found.add((String) value); // malformed: any part of it may be a password
                }
            } else if (value != null) {
                collect(JSON.valueToTree(value), secret, found);
            }
        }
        List<String> values = new ArrayList<>();
        for (String secret : found) {
            if (!secret.isEmpty()) {
                values.add(secret);
                String escaped = escapedInJson(secret);
                if (!escaped.equals(secret)) {
                    values.add(escaped);
                }
            }
        }
        values.sort(Comparator.comparingInt(String::length).reversed());
        return new ConfigSecrets(List.copyOf(values));
    }

    /** Whether a configuration key names a secret (case and {@code -}/{@code _} ignored). */
    public static boolean isSecretName(String key) {
        String name = key.toLowerCase(Locale.ROOT).replace('-', '_').replace('.', '_');
        return SECRET_KEY.matcher(name).find();
    }

    /**
     * A key is secret when, lower-cased with '-' and '.' read as '_', it is one of the table's
     * secret words or ends with '_' and one ({@code api_key_env}, a variable's name, is not).
     */
    private static Pattern secretKeyPattern() {
        try (var table = ConfigSecrets.class.getResourceAsStream(TABLE)) {
            if (table == null) {
                throw new IllegalStateException("the table of secret keys " + TABLE
                        + " is missing from the classpath (the build copies it from "
                        + "flink_agents_ltm/api/secret_keys.json)");
            }
            List<String> words = new ArrayList<>();
            JSON.readTree(table).get("secret_words").forEach(word -> words.add(
                    Pattern.quote(word.asText())));
            return Pattern.compile("(^|_)(" + String.join("|", words) + ")$");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** {@code text} with every secret replaced by {@link #MASK}; {@code null} stays null. */
    public String scrub(String text) {
        if (text == null) {
            return null;
        }
        String scrubbed = text;
        for (String secret : values) {
            scrubbed = scrubbed.replace(secret, MASK);
        }
        return scrubbed;
    }

    /**
     * A printable copy of {@code config}: secret values masked, JSON text (the vector store)
     * masked inside and kept as JSON text; JSON text that does not parse is not shown at all.
     */
    public static Map<String, Object> redact(Map<String, ?> config) {
        Map<String, Object> copy = new HashMap<>();
        for (Map.Entry<String, ?> entry : config.entrySet()) {
            Object value = entry.getValue();
            if (isSecretName(entry.getKey()) && value != null) {
                copy.put(entry.getKey(), MASK);
            } else if (value instanceof String && looksLikeJson((String) value)) {
                copy.put(entry.getKey(), redactJson((String) value));
            } else if (value instanceof Map || value instanceof List) {
                copy.put(entry.getKey(), mask(JSON.valueToTree(value)).toString());
            } else {
                copy.put(entry.getKey(), value instanceof String ? maskUrls((String) value) : value);
            }
        }
        return copy;
    }

    /** JSON text with its secret fields masked; text that does not parse is not shown. */
    public static String redactJson(String json) {
        try {
            return mask(JSON.readTree(json)).toString();
        } catch (JsonProcessingException e) {
            return "<not valid JSON, not shown>";
        }
    }

    // ------------------------------------------------------------------ internals

    private static void collect(JsonNode node, boolean secret, Set<String> found) {
        if (node.isObject()) {
            node.fields().forEachRemaining(
                    field -> collect(field.getValue(), secret || isSecretName(field.getKey()), found));
        } else if (node.isArray()) {
            node.forEach(element -> collect(element, secret, found));
        } else if (node.isTextual()) {
            String text = node.textValue();
            if (secret) {
                found.add(text);
            }
            passwordsInside(text, found);
        } else if (secret && node.isValueNode() && !node.isNull()) {
            found.add(node.asText());
        }
    }

    /** The password of a {@code scheme://user:password@host} URL or a {@code password=} DSN. */
    private static void passwordsInside(String text, Set<String> found) {
        Matcher url = URL_PASSWORD.matcher(text);
        while (url.find()) {
            found.add(url.group(1));
        }
        Matcher dsn = DSN_PASSWORD.matcher(text);
        while (dsn.find()) {
            String value = dsn.group(1);
            found.add(value.startsWith("'") ? value.substring(1, value.length() - 1) : value);
        }
    }

    private static JsonNode mask(JsonNode node) {
        if (node.isObject()) {
            ObjectNode copy = JSON.createObjectNode();
            node.fields().forEachRemaining(field -> copy.set(field.getKey(),
                    isSecretName(field.getKey()) && !field.getValue().isNull()
                            ? TextNode.valueOf(MASK)
                            : mask(field.getValue())));
            return copy;
        }
        if (node.isArray()) {
            ArrayNode copy = JSON.createArrayNode();
            node.forEach(element -> copy.add(mask(element)));
            return copy;
        }
        if (node.isTextual()) {
            return TextNode.valueOf(maskUrls(node.textValue()));
        }
        return node;
    }

    private static String maskUrls(String text) {
        Set<String> inside = new LinkedHashSet<>();
        passwordsInside(text, inside);
        String masked = text;
        for (String secret : inside) {
            if (!secret.isEmpty()) {
                masked = masked.replace(secret, MASK);
            }
        }
        return masked;
    }

    private static boolean looksLikeJson(String text) {
        String stripped = text.strip();
        return stripped.startsWith("{") || stripped.startsWith("[");
    }

    private static String escapedInJson(String text) {
        String quoted = TextNode.valueOf(text).toString();
        return quoted.substring(1, quoted.length() - 1);
    }
}
