#!/usr/bin/env python3
"""PyTorch FlexAttention on one GPU beside SDPA's FlashAttention-2, causal.

    python3 calibration/measure/h100_flex.py --out DIR [--budget-s 420]

torchtitan main runs its language models' attention through FlexAttention
(`torchtitan/models/common/attention.py` at b5bcd76c: `flex_attention`
under `torch.compile` with the inductor options `max_autotune` and
`coordinate_descent_tuning`, a block mask from `create_block_mask`).
parplan prices it as a share of FlashAttention-2; this script measures that
share on the same GPU in the same run. Writes DIR/attention_flex.csv: per
sequence length (2K to 128K, 16K tokens per call up to 16K, as
attention.csv), causal, head dim 128, 32 heads, the forward and backward
milliseconds of

- SDPA's flash path (FlashAttention-2), the reference;
- flex_attention compiled with torch.compile's defaults;
- flex_attention compiled with torchtitan's inductor options (autotuned,
  so its first call takes minutes: measured at as many lengths as the
  budget allows, the middle lengths first);

and (`--only gqa`, DIR/attention_flex_gqa.csv) grouped-query attention (32
query heads over 8 key/value heads, Llama 3 8B's) for flex at the defaults
beside SDPA's flash path on repeated heads. Every row carries the
device, driver, torch, CUDA and cuDNN versions and the first call's
seconds (compilation included).
"""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h100_kernels import Table, main_for, over_budget, sdpa_pass_ms  # noqa: E402

HEADS, HD = 32, 128
SEQS = (2048, 4096, 8192, 16384, 32768, 65536, 131072)
TORCHTITAN_OPTIONS = {"max_autotune": True, "coordinate_descent_tuning": True, "triton.cudagraphs": False}
FIELDS = ["kernel", "batch", "heads", "kv_heads", "head_dim", "seq", "causal", "fwd_ms", "bwd_ms", "fwd_tflops",
          "bwd_tflops", "first_call_s", "flop_convention"]
CONVENTION = "fwd 4*b*h*s^2*d/2 (causal), bwd 2.5x fwd"


def batch_for(seq):
    return max(1, 16384 // seq)


def write_row(t, label, seq, kv_heads, f_ms, b_ms, first_s):
    """One measured kernel: its times, TFLOP/s by the causal convention."""
    b = batch_for(seq)
    fwd_flop = 4.0 * b * HEADS * seq * seq * HD / 2
    t.row(kernel=label, batch=b, heads=HEADS, kv_heads=kv_heads, head_dim=HD, seq=seq, causal=1,
          fwd_ms=f"{f_ms:.4f}", bwd_ms=f"{b_ms:.4f}", fwd_tflops=f"{fwd_flop / f_ms / 1e9:.1f}",
          bwd_tflops=f"{2.5 * fwd_flop / b_ms / 1e9:.1f}", first_call_s=f"{first_s:.1f}",
          flop_convention=CONVENTION)
    print(f"{label:60s} seq {seq:6d}: fwd {fwd_flop / f_ms / 1e9:6.1f} bwd {2.5 * fwd_flop / b_ms / 1e9:6.1f}"
          f" TFLOP/s  first {first_s:.1f} s", flush=True)


def flex_pass_ms(flex, block_mask_for, b, h, kv_heads, seq, reps):
    """Median forward and backward milliseconds of a compiled flex_attention,
    each call timed alone after one (compiling) warm-up; and that first
    call's wall seconds."""
    q = torch.randn(b, h, seq, HD, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k, v = (torch.randn(b, kv_heads, seq, HD, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            for _ in range(2))
    dout = torch.randn(b, h, seq, HD, device="cuda", dtype=torch.bfloat16)
    mask = block_mask_for(seq)
    gqa = kv_heads != h
    fwd, bwd, first_s = [], [], 0.0
    for i in range(1 + reps):
        t0 = time.time()
        e0, e1, e2 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        e0.record()
        out = flex(q, k, v, block_mask=mask, enable_gqa=gqa)
        e1.record()
        out.backward(dout)
        e2.record()
        torch.cuda.synchronize()
        q.grad = k.grad = v.grad = None
        if i == 0:
            first_s = time.time() - t0
        else:
            fwd.append(e0.elapsed_time(e1))
            bwd.append(e1.elapsed_time(e2))
    fwd.sort()
    bwd.sort()
    return fwd[len(fwd) // 2], bwd[len(bwd) // 2], first_s


def measure_flex(args, meta_row):
    from torch.nn.attention import SDPBackend
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    import torch._dynamo
    for name in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                 "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 256)
    t = Table(os.path.join(args.out, "attention_flex.csv"), FIELDS, meta_row)

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    compiled_mask = torch.compile(create_block_mask)
    masks = {}

    def block_mask_for(seq):
        if seq not in masks:
            masks[seq] = compiled_mask(causal, None, None, seq, seq, device="cuda")
        return masks[seq]

    flex_default = torch.compile(flex_attention, dynamic=False)
    flex_titan = torch.compile(flex_attention, dynamic=False, options=TORCHTITAN_OPTIONS)

    def row(label, seq, kv_heads, f_ms, b_ms, first_s):
        write_row(t, label, seq, kv_heads, f_ms, b_ms, first_s)

    def error_row(label, seq, kv_heads, e):
        t.row(kernel=label, batch=batch_for(seq), heads=HEADS, kv_heads=kv_heads, head_dim=HD, seq=seq, causal=1,
              fwd_ms="", bwd_ms="", fwd_tflops=f"error: {e}"[:200], bwd_tflops="", first_call_s="",
              flop_convention="")
        print(f"{label} seq {seq}: error {e}"[:300], flush=True)

    def reps(seq):
        return 2 if seq >= 65536 else 6

    for seq in SEQS:
        for label, run in (
                ("flash (SDPA FlashAttention-2)",
                 lambda: (*sdpa_pass_ms(SDPBackend.FLASH_ATTENTION, batch_for(seq), HEADS, seq, seq, HD, True,
                                        reps(seq)), 0.0)),
                ("flex (torch.compile defaults)",
                 lambda: flex_pass_ms(flex_default, block_mask_for, batch_for(seq), HEADS, HEADS, seq, reps(seq)))):
            if over_budget(args, f"{label} {seq}"):
                return
            try:
                row(label, seq, HEADS, *run())
            except Exception as e:  # noqa: BLE001 - recorded, not fatal
                error_row(label, seq, HEADS, e)
            torch.cuda.empty_cache()
    for seq in (8192, 32768, 2048, 131072, 16384, 4096, 65536):
        if over_budget(args, f"flex torchtitan options {seq}"):
            break
        label = "flex (torchtitan inductor options: max_autotune, coordinate_descent_tuning)"
        try:
            row(label, seq, HEADS, *flex_pass_ms(flex_titan, block_mask_for, batch_for(seq), HEADS, HEADS, seq,
                                                 reps(seq)))
        except Exception as e:  # noqa: BLE001
            error_row(label, seq, HEADS, e)
        torch.cuda.empty_cache()
    print("flex done", flush=True)


def measure_gqa(args, meta_row):
    """Grouped-query attention (32 query heads over 8 key/value heads, Llama
    3 8B's): flex at torch.compile's defaults, and SDPA's flash path with
    the key/value heads repeated (what torchtitan's SDPA path did), into
    DIR/attention_flex_gqa.csv."""
    from torch.nn.attention import SDPBackend
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    t = Table(os.path.join(args.out, "attention_flex_gqa.csv"), FIELDS, meta_row)
    compiled_mask = torch.compile(create_block_mask)
    flex_default = torch.compile(flex_attention, dynamic=False)
    kv = 8
    for seq in (8192, 32768, 131072):
        b = batch_for(seq)
        mask = compiled_mask(lambda b_, h_, q, k: q >= k, None, None, seq, seq, device="cuda")
        for label, run in (
                ("flash (SDPA FlashAttention-2), key/value heads repeated",
                 lambda: (*sdpa_pass_ms(SDPBackend.FLASH_ATTENTION, b, HEADS, seq, seq, HD, True,
                                        2 if seq >= 65536 else 6), 0.0)),
                ("flex (torch.compile defaults), grouped-query 32/8",
                 lambda: flex_pass_ms(flex_default, lambda _s: mask, b, HEADS, kv, seq, 2 if seq >= 65536 else 6))):
            if over_budget(args, f"{label} {seq}"):
                return
            try:
                write_row(t, label, seq, kv, *run())
            except Exception as e:  # noqa: BLE001
                print(f"{label} {seq}: error {e}"[:300], flush=True)
            torch.cuda.empty_cache()


def main():
    main_for(__doc__, {"flex": measure_flex, "gqa": measure_gqa}, budget_s=420.0)


if __name__ == "__main__":
    sys.exit(main())
