#!/usr/bin/env python3
"""Fused against separate input projections on one H100: what running the
query, key and value projections (and the FFN's gate and up projections) as
separate matmuls over the same input costs beside one fused matmul of the
summed width, forward and backward, eager and under torch.compile.

    python3 calibration/measure/h100_projections.py --out DIR [--budget-s 300]

torchtitan's Llama runs wq, wk, wv and w1, w3 as separate nn.Linear
(torchtitan/models/llama3/model/model.py @ v0.2.2); Megatron-LM fuses them
(linear_qkv, linear_fc1). Separately, each projection reads the whole input
(a skinny one, the key or value projection at tp 8, is bound by that read)
and the input's gradient is the sum of each projection's input-gradient
matmul. Writes DIR/projections.csv: model shape, tp, tokens (the gathered
sequence-parallel input's rows), group (attention_in: q, k, v; ffn_in:
gate, up), layout (fused / separate), mode (eager / compiled), pass
(forward / forward_backward), median milliseconds over event-timed calls.
Parameter and input gradients are cleared before each call, so no call
accumulates into an earlier one's gradients. DIR/skinny_gemm.csv: the key
(value) projection's three GEMMs alone at tp 8, bf16 and fp8 (--only skinny).
"""
import os
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h100_kernels import Table, gemm_ms, main_for, time_calls  # noqa: E402

START = time.time()

# (model, tp, tokens, hidden, q width, kv width each, ffn width each), per
# rank: Llama 3 8B (hidden 4096, 32 heads, 8 KV heads, head 128, FFN 14336)
# at tp 8 with torchtitan's June 2025 local batch 12 x 8192 gathered, and
# at tp 1 with local batch 2; Llama 3 70B (8192, 64 heads, 8 KV, 28672) at
# tp 8 with local batch 16.
SHAPES = [
    ("llama3-8b", 8, 12 * 8192, 4096, 512, 128, 1792),
    ("llama3-8b", 1, 2 * 8192, 4096, 4096, 1024, 14336),
    ("llama3-70b", 8, 16 * 8192, 8192, 1024, 128, 3584),
]


class Fused(nn.Module):
    def __init__(self, hidden, widths):
        super().__init__()
        self.proj = nn.Linear(hidden, sum(widths), bias=False)

    def forward(self, x):
        return (self.proj(x),)


class Separate(nn.Module):
    def __init__(self, hidden, widths):
        super().__init__()
        self.projs = nn.ModuleList(nn.Linear(hidden, w, bias=False) for w in widths)

    def forward(self, x):
        return tuple(p(x) for p in self.projs)


def case_ms(module, x, grads, backward):
    def call():
        x.grad = None
        for p in module.parameters():
            p.grad = None
        outs = module(x)
        if backward:
            torch.autograd.backward(outs, grads)
    return time_calls(call, warmup=3, iters=10)


def measure_projections(args, meta_row):
    table = Table(os.path.join(args.out, "projections.csv"),
                  ["model", "tp", "tokens", "hidden", "group", "widths", "layout", "mode", "pass", "median_ms"],
                  meta_row)
    for model, tp, tokens, hidden, q, kv, ffn in SHAPES:
        for group, widths in (("attention_in", (q, kv, kv)), ("ffn_in", (ffn, ffn))):
            for mode in ("eager", "compiled"):
                for layout, cls in (("fused", Fused), ("separate", Separate)):
                    if time.time() - START > args.budget_s:
                        print("budget spent: skipping", model, tp, group, mode, layout, flush=True)
                        continue
                    torch._dynamo.reset()
                    module = cls(hidden, widths).cuda().to(torch.bfloat16)
                    run = torch.compile(module) if mode == "compiled" else module
                    x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                    out_widths = (sum(widths),) if layout == "fused" else widths
                    grads = tuple(torch.randn(tokens, w, device="cuda", dtype=torch.bfloat16) for w in out_widths)
                    for name, backward in (("forward", False), ("forward_backward", True)):
                        ms = case_ms(run, x, grads, backward)
                        table.row(model=model, tp=tp, tokens=tokens, hidden=hidden, group=group,
                                  widths="+".join(map(str, widths)), layout=layout, mode=mode, **{"pass": name},
                                  median_ms=f"{ms:.4f}")
                        print(model, tp, group, mode, layout, name, round(ms, 3), "ms",
                              round(time.time() - START), "s", flush=True)
                    del module, run, x, grads
                    torch.cuda.empty_cache()


def measure_skinny(args, meta_row):
    """The key/value projection's GEMMs alone at tp 8 (128 output columns),
    bf16 and fp8 e4m3 (torch._scaled_mm): forward (m x k) x (k x n), input
    gradient (m x n) x (n x k), weight gradient (n x m) x (m x k); the
    traffic-bound shapes the fused/separate comparison turns on."""
    table = Table(os.path.join(args.out, "skinny_gemm.csv"),
                  ["model", "tp", "precision", "pass", "m", "k", "n", "median_ms"], meta_row)
    for model, tp, tokens, hidden, q, kv, ffn in SHAPES:
        if tp != 8:
            continue
        for precision in ("bf16", "fp8"):
            for name, (m, k, n) in (("fprop", (tokens, hidden, kv)), ("dgrad", (tokens, kv, hidden)),
                                    ("wgrad", (kv, tokens, hidden))):
                if time.time() - START > args.budget_s:
                    print("budget spent: skipping", model, precision, name, flush=True)
                    continue
                ms = gemm_ms(m, k, n, precision)
                table.row(model=model, tp=tp, precision=precision, **{"pass": name}, m=m, k=k, n=n,
                          median_ms=f"{ms:.4f}")
                print(model, precision, name, m, k, n, round(ms, 4), "ms", flush=True)
                torch.cuda.empty_cache()


def main():
    main_for(__doc__, {"projections": measure_projections, "skinny": measure_skinny}, budget_s=300.0)


if __name__ == "__main__":
    sys.exit(main())
