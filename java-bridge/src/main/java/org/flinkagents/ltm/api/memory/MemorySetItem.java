package org.flinkagents.ltm.api.memory;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One stored {@code String} value with its metadata, as read back from a memory set. {@code
 * score} is the similarity of a search hit (higher is closer) and {@code null} for items read
 * with {@code get}.
 */
public final class MemorySetItem {
    private final String memorySetName;
    private final String id;
    private final String value;
    private final Map<String, Object> metadata;
    private final String createdAt;
    private final String updatedAt;
    private final Double score;

    public MemorySetItem(
            String memorySetName,
            String id,
            String value,
            Map<String, Object> metadata,
            String createdAt,
            String updatedAt,
            Double score) {
        this.memorySetName = memorySetName;
        this.id = id;
        this.value = value;
        this.metadata =
                metadata == null
                        ? Collections.emptyMap()
                        : Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
        this.createdAt = createdAt;
        this.updatedAt = updatedAt;
        this.score = score;
    }

    public String getMemorySetName() {
        return memorySetName;
    }

    public String getId() {
        return id;
    }

    public String getValue() {
        return value;
    }

    public Map<String, Object> getMetadata() {
        return metadata;
    }

    public String getCreatedAt() {
        return createdAt;
    }

    public String getUpdatedAt() {
        return updatedAt;
    }

    public Double getScore() {
        return score;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof MemorySetItem)) {
            return false;
        }
        MemorySetItem other = (MemorySetItem) o;
        return Objects.equals(memorySetName, other.memorySetName)
                && Objects.equals(id, other.id)
                && Objects.equals(value, other.value)
                && Objects.equals(metadata, other.metadata)
                && Objects.equals(createdAt, other.createdAt)
                && Objects.equals(updatedAt, other.updatedAt)
                && Objects.equals(score, other.score);
    }

    @Override
    public int hashCode() {
        return Objects.hash(memorySetName, id, value, metadata, createdAt, updatedAt, score);
    }

    @Override
    public String toString() {
        return "MemorySetItem{set='" + memorySetName + "', id='" + id + "', value='" + value
                + "', metadata=" + metadata + (score != null ? ", score=" + score : "") + '}';
    }
}
