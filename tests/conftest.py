"""Settings every test process shares, set before any numeric library loads.

One OpenMP thread: CTranslate2 and torch round differently with different thread counts, and Ray
gives each worker one thread per CPU it holds, so the equivalence tests (local run against the
cluster's) compare like with like on a machine of any size.

Without an NVIDIA device, Triton kernels (the split-KV decode attention) run under Triton's
interpreter on CPU tensors; Triton decides that when `triton.language` is first imported (which
importing transformers' Qwen2 already does), so it is set here.
"""

import os

os.environ["OMP_NUM_THREADS"] = "1"
if not os.path.exists("/dev/nvidiactl"):
    os.environ.setdefault("TRITON_INTERPRET", "1")
