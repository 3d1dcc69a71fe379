"""What a job's embedded store holds, read back through Mem0 itself."""

from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory


def rows(job_id: str, base_dir) -> dict[str, str]:
    """Every row of ``job_id`` in the embedded store under ``base_dir`` (stores that embed
    with the hashing model): ``{id: text}``."""
    memory, release = acquire_memory(StoreSpec(job_id, embedder="hashing", base_dir=base_dir))
    try:
        found = memory.get_all(filters={"user_id": job_id}, top_k=100_000)["results"]
    finally:
        release()
    return {row["id"]: row["memory"] for row in found}
