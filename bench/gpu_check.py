"""One-shot device check of Murmur's decode engine: correctness first, then speed vs the roofline.

Runs with the device's plain `python3` from the repository root: it puts the repository on
`sys.path` itself and imports only torch, transformers and numpy (and Triton, where torch has it).
Each verdict is printed (flushed) the moment it is decided; `--out DIR` writes `summary.json` and
`table.txt` as it goes, so a run cut short keeps everything decided; `--budget-s` skips the table
rows that would not fit.

Correctness (PASS/FAIL), each a comparison shown able to fail: (1) float32 engine tokens equal HF `generate`
on a small random Qwen2 (TF32 off, CUDA graphs on); (2) identical tokens with graphs on and off, with
eviction, refill and row moves, and (2b) with `speech-anchor` rows in a store that must grow in place under
captured steps (it must grow); (3) the split-KV Triton kernel against float32 SDPA by per-row relative
error, bf16, ragged rows with a length-0 row, up to 40k slots (CUDA with Triton only), passing only if the
same comparison fails with one split dropped on purpose (`gpu_kernel_check.py`); (4) per-step logits of the
engine against a float32 HF forward under teacher forcing on the Qwen2.5-7B shape: per-position relative
error within `LOGIT_RATIO` times that of HF's own bf16 forward, the same comparison one step off failing
it, and every argmax disagreement a near-tie within bf16 noise. Then the attention kernels that actually
ran (one profiled eager decode), and the table: every batch's short rows first, then the policy rows, per
batch: HF `generate`, the engine with graphs on and off over the same steps, then the engine with each
eviction policy over a whole 300 s chunk (a row is skipped when the graphs row's prefill and step time say
it would end past the budget); (5) a verdict that the largest batch's rows were measured inside the budget.
Decode ms/step excludes prefill and graph capture. Attention is timed alone with the engine's kernel over
distinct per-layer buffers, all layers replayed as one CUDA graph as the captured step runs them. The
roofline is (weights + batch × mean visible KV bytes) over the bandwidth of a 1 GiB device copy; the target
at batch 16 is 1.3× the roofline.

    python3 bench/gpu_check.py --out gpu_check_out --budget-s 330   # `make gpu-check-device`
    python3 bench/gpu_check.py --batches 16                         # one batch size (or 64)
    python3 bench/gpu_check.py --dry-run                            # every path but CUDA, CPU
The exit status is 1 when a check fails.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]  # plain `python3`, no install, no PYTHONPATH
import re  # noqa: E402

import torch  # noqa: E402
from gpu_kernel_check import kernel_verdict, relative_error  # noqa: E402
from gpu_parts import (  # noqa: E402
    Lagging,
    Setup,
    build_model,
    copy_bandwidth,
    engine_config,
    forced_logits,
    make_requests,
    sync,
    versions,
)
from gpu_report import Report, progress  # noqa: E402
from gpu_table import HEADER, speed_table  # noqa: E402

from engine.decode.attention import available, make_attention  # noqa: E402
from engine.decode.config import EngineConfig  # noqa: E402
from engine.decode.engine import MurmurDecoder  # noqa: E402
from engine.decode.eviction import PRESETS, EvictionConfig, LayerRange  # noqa: E402
from engine.decode.fused import rope  # noqa: E402
from engine.decode.step import ModelParts  # noqa: E402

SMALL = dict(
    hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2
)
QWEN_7B = dict(
    hidden_size=3584,
    intermediate_size=18944,
    num_hidden_layers=28,
    num_attention_heads=28,
    num_key_value_heads=4,
    vocab_size=152064,
)
FULL = Setup(
    model=QWEN_7B,
    prompt=(60, 2250, 40),
    steps=2700,
    hf_steps=128,
    batches=(16, 64),
    policies={"none": EvictionConfig("none"), **{k: PRESETS[k] for k in ("paper-output", "paper-both")}},
    forced=32,
)
DRY = Setup(
    model={**SMALL, "vocab_size": 512},
    prompt=(6, 48, 4),
    steps=40,
    hf_steps=12,
    batches=(2, 4),
    policies={
        "none": EvictionConfig("none"),
        "both": EvictionConfig("both", n_sink=2, output_window=8, speech_window=16, delay=4),
    },
    forced=8,
)
BOTH_SMALL = EvictionConfig(  # both policies, and a second layer group with its own speech window
    "both",
    n_sink=1,
    output_window=4,
    speech_window=6,
    delay=2,
    speech_rate=1.0,
    layers=(LayerRange(1, 2, window=9),),
)
LOGIT_RATIO = 1.25  # bf16 logits' relative error to float32 (L2) at most this × HF's own bf16 forward
ATTENTION_KERNEL = re.compile(
    r"attn|attention|fmha|flash|split_kv|_partial|_combine|efficient", re.IGNORECASE
)


def decode(model, requests, config: EngineConfig) -> dict[int, tuple[int, ...]]:
    return {r.id: r.token_ids for r in MurmurDecoder(model, config).decode(requests)}


@torch.inference_mode()
def hf_tokens(model, request) -> tuple[int, ...]:
    out = model.generate(
        inputs_embeds=request.inputs_embeds[None],
        max_new_tokens=request.max_new_tokens,
        do_sample=False,
        eos_token_id=None,
        pad_token_id=0,
    )
    return tuple(out[0].tolist())


def check_small(device: torch.device, report: Report) -> None:
    """Checks (1) and (2) on a small float32 model with large weights (no near-ties)."""
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    model = build_model({**SMALL, "vocab_size": 512}, device, torch.float32, std=0.2)
    requests = make_requests(model, [40, 47, 35, 52, 30], [24, 12, 24, 18, 24], device, torch.float32)
    got = decode(model, requests, engine_config(device, True, max_batch=3))
    same = sum(got[r.id] == hf_tokens(model, r) for r in requests)
    report.verdict(
        "float32 engine (graphs on) = HF generate", same == len(requests), f"{same}/{len(requests)} rows"
    )
    eager = decode(model, requests, engine_config(device, False, max_batch=3, eviction=BOTH_SMALL))
    graphs = decode(model, requests, engine_config(device, True, max_batch=3, eviction=BOTH_SMALL))
    equal = sum(eager[i] == graphs[i] for i in eager)
    report.verdict(
        "graphs on = graphs off (eviction, refill)", equal == len(eager), f"{equal}/{len(eager)} rows"
    )
    check_anchor_growth(model, requests, device, report)


def check_anchor_growth(model, requests, device: torch.device, report: Report) -> None:
    """speech-anchor rows in a store reserved too small (planned for the 5 % lag only: `turn_tokens=0`),
    so that it grows in place while decoding: the same tokens with captured steps as eager, and it grew."""
    anchor = EvictionConfig("speech-anchor", speech_sink=2, look_back=3, look_ahead=5, turn_tokens=0)
    got, growths = {}, {}
    for graphs in (False, True):
        config = engine_config(device, graphs, max_batch=3, eviction=anchor, kv_slots=1)
        decoder = MurmurDecoder(model, config, speech_anchor=Lagging)
        got[graphs] = {r.id: r.token_ids for r in decoder.decode(requests)}
        growths[graphs] = decoder.stats.growths
    equal = sum(got[False][i] == got[True][i] for i in got[False])
    grew = min(growths.values()) > 0
    report.verdict(
        "graphs on = graphs off (speech-anchor, store growth)",
        equal == len(got[False]) and grew,
        f"{equal}/{len(got[False])} rows; the store grew {growths[True]} time(s) under captured steps",
    )


@torch.inference_mode()
def check_split_kv(device: torch.device, report: Report) -> None:
    """Check (3): the split-KV kernel against float32 SDPA by relative error in bf16 at the 7B head
    shape, ragged (a length-0 row, stale slots), to 40k; one split dropped on purpose must fail."""
    name = "split-kv kernel vs fp32 SDPA (bf16, ragged, to 40k; a dropped split fails)"
    if not available("split-kv", device, torch.bfloat16) or device.type != "cuda":
        report.verdict(name, None, "needs CUDA with Triton")
        return
    cases = [(1, 40960, (28, 4, 128)), (16, 5120, (28, 4, 128)), (64, 2048, (28, 4, 128))]
    ok, detail = kernel_verdict(cases, torch.bfloat16, device)
    report.verdict(name, ok, detail)


def check_forced(model, setup: Setup, device: torch.device, dtype: torch.dtype, report: Report) -> None:
    """Check (4): per-step logits under teacher forcing vs a float32 HF forward over the same tokens,
    by relative error per position, against what HF's own forward in the model's dtype gets; the
    same comparison one step off must fail it."""
    requests = make_requests(model, [sum(setup.prompt)] * 4, setup.forced, device, dtype, setup.prompt)
    half = dtype != torch.float32
    reference = copy.deepcopy(model).float() if half else model
    config = engine_config(device, True, max_batch=4)
    ours, theirs, hf = forced_logits(model, requests, setup.forced, config, (reference, model))
    del reference
    error = relative_error(ours.flatten(0, 1), theirs.flatten(0, 1))
    hf_error = relative_error(hf.flatten(0, 1), theirs.flatten(0, 1))  # what the dtype itself costs
    shifted = relative_error(ours[:, 1:].flatten(0, 1), theirs[:, :-1].flatten(0, 1))  # one step off
    ours, theirs = ours.flatten(0, 1), theirs.flatten(0, 1)  # (positions, V)
    diff = (ours - theirs).abs()
    picked = ours.argmax(-1)
    flips = picked != theirs.argmax(-1)
    margin = theirs.max(-1).values - theirs.gather(-1, picked[:, None])[:, 0]  # fp32's preference, ≥ 0
    noise = 2 * diff.kthvalue(max(1, int(0.999 * diff.shape[-1])), dim=-1).values  # per position
    hard = int((flips & (margin > noise)).sum())
    # bf16 rounding moves a random 28-layer model's logits by several % (HF's own forward too) and
    # flips near-ties; a wrong position, slot or mask moves them by their whole size, as the
    # one-step-off comparison shows
    tolerance = LOGIT_RATIO * hf_error if half else 1e-4
    ok = error <= tolerance < shifted and hard == 0
    name = f"{str(dtype).removeprefix('torch.')} teacher-forced logits vs fp32 HF forward"
    detail = (
        f"relative error {error:.2e} (HF's own {str(dtype).removeprefix('torch.')} forward: "
        f"{hf_error:.2e}; tolerance {tolerance:.2e}; one step off: {shifted:.2f}), argmax agreement "
        f"{1 - flips.float().mean().item():.1%}, disagreements beyond noise {hard}/{int(flips.sum())}"
    )
    report.verdict(name, ok, detail)


def attention_used(model, setup: Setup, device: torch.device, report: Report) -> None:
    """Profile one short eager decode and name the attention kernels that ran (a captured step
    replays the same kernels; capturing under the profiler is what CUPTI handles worst, so no)."""
    from torch.profiler import ProfilerActivity, profile

    parts = ModelParts.from_model(model)
    chosen = make_attention("auto", parts.attention_shape, device).name
    lengths = [sum(setup.prompt), sum(setup.prompt) - 3]  # ragged: SDPA takes its mask, as when captured
    requests = make_requests(model, lengths, 4, device, parts.dtype)
    decoder = MurmurDecoder(model, engine_config(device, False, max_batch=2))
    list(decoder.decode(requests))  # compile the glue and the kernel outside the profile
    cuda = device.type == "cuda"
    activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if cuda else [ProfilerActivity.CPU]
    with profile(activities=activities) as prof:
        list(decoder.decode(requests))
        sync(device)
    on_device = torch.autograd.DeviceType.CUDA if cuda else torch.autograd.DeviceType.CPU
    names = sorted(
        {e.name for e in prof.events() if e.device_type == on_device and ATTENTION_KERNEL.search(e.name)}
    )
    kernels = "; ".join(name[:90] for name in names[:6]) or "none matched"
    report.note("attention", {"backend": chosen, "kernels": names})
    report.say(f"attention backend {chosen}; kernels seen in one profiled eager decode: {kernels}")


def guarded(report: Report, name: str, check, *args) -> None:
    """Run a check; an exception is its FAIL (with the error), never the end of the run."""
    try:
        check(*args, report)
    except Exception as exc:  # the one run must still report everything else
        report.verdict(
            name, False, f"raised {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dry-run", action="store_true", help="toy shapes on the CPU: every path but CUDA")
    parser.add_argument("--batches", help="comma-separated batch sizes (default 16,64)")
    parser.add_argument("--steps", type=int, help="decode steps of the policy rows (default 2700)")
    parser.add_argument("--hf-steps", type=int, help="decode steps of the HF rows (default 128)")
    parser.add_argument("--no-speed", action="store_true", help="correctness checks only")
    parser.add_argument("--out", help="folder for summary.json and table.txt, written as the run goes")
    parser.add_argument(
        "--budget-s", type=float, help="skip the table rows that would end past this many seconds"
    )
    args = parser.parse_args()
    if not args.dry_run and not torch.cuda.is_available():
        print("gpu_check: skipped, needs a CUDA GPU (use --dry-run to exercise it on the CPU)")
        return
    setup = DRY if args.dry_run else FULL
    device = torch.device("cuda" if not args.dry_run else "cpu")
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    batches = tuple(int(b) for b in args.batches.split(",")) if args.batches else setup.batches
    report = Report(args.out, args.budget_s)
    report.environment(versions(device))
    guarded(report, "float32 engine = HF generate; graphs on = off", check_small, device)
    guarded(report, "split-kv kernel = SDPA", check_split_kv, device)
    model = build_model(setup.model, device, dtype)
    guarded(report, "teacher-forced logits vs HF forward", check_forced, model, setup, device, dtype)
    try:
        attention_used(model, setup, device, report)
    except Exception as exc:  # knowing the kernel is useful, not essential
        report.say(f"attention kernel: profiling failed ({type(exc).__name__}: {exc})")
    bandwidth = copy_bandwidth(device)
    glue = "compiled" if MurmurDecoder(model).fused.glue.rope is not rope else "plain"
    report.say(f"\ndevice {report.data['environment']['device']}, {str(dtype).removeprefix('torch.')}, "
               f"copy bandwidth {bandwidth / 1e9:.0f} GB/s; glue {glue}, "
               f"CUDA graphs {'on' if device.type == 'cuda' else 'emulated'}")  # fmt: skip
    report.note("bandwidth_gb_s", bandwidth / 1e9)
    if not args.no_speed:
        report.say(f"prompt {sum(setup.prompt)} tokens ({setup.prompt[1]} speech)")
        report.table("{:>5} {:<26} {:>9} {:>8} {:>8} {:>6} {:>8} {:>6} {:>7} {:>7}".format(*HEADER))
        speed_table(model, setup, batches, bandwidth, report, args)
    ok = all(c["verdict"] != "FAIL" for c in report.data["checks"])
    report.finish(ok)
    report.say(f"{'all checks passed' if ok else 'A CHECK FAILED'}; took {report.elapsed():.0f} s")
    progress("done")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
