#!/usr/bin/env python3
"""Attention dropout inside the fused kernel on one H100: causal attention
forward and forward + backward, with dropout probability 0 and 0.1, on
SDPA's flash path (FlashAttention-2) and, where it takes dropout, its cuDNN
path.

    python3 calibration/measure/h100_attention_dropout.py --out DIR

GPT-3 configurations keep attention dropout 0.1 (NeMo's GPT-3 configs,
Megatron's default), which FlashAttention-2 applies inside the kernel by
generating its random mask from the Philox counter as it goes. Calls are
queued back to back (h100_kernels.time_calls), so the host's dispatch is
hidden as in training. Writes DIR/attention_dropout.csv: kernel, batch,
heads, head dim, sequence length, dropout, forward and backward
milliseconds (the backward as forward + backward less the forward) and
TFLOP/s (causal: half the score matrix; backward 2.5x the forward).
"""
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h100_kernels import Table, main_for, over_budget, time_calls  # noqa: E402

START = time.time()


def measure(args, meta_row):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    t = Table(os.path.join(args.out, "attention_dropout.csv"),
              ["kernel", "batch", "heads", "head_dim", "seq", "dropout", "fwd_ms", "bwd_ms", "fwd_tflops",
               "bwd_tflops"], meta_row)
    heads, hd = 32, 128
    for seq in (2048, 4096, 8192, 16384):
        batch = max(1, 16384 // seq)
        q, k, v = (torch.randn(batch, heads, seq, hd, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                   for _ in range(3))
        dout = torch.randn(batch, heads, seq, hd, device="cuda", dtype=torch.bfloat16)
        fwd_flop = 4.0 * batch * heads * seq * seq * hd / 2
        for label, backend in (("flash (SDPA FlashAttention-2)", SDPBackend.FLASH_ATTENTION),
                               ("cudnn (SDPA cuDNN fused attention)", SDPBackend.CUDNN_ATTENTION)):
            for p in (0.0, 0.1):
                if over_budget(args, "dropout"):
                    return
                try:
                    with sdpa_kernel([backend]):
                        def fwd():
                            with torch.no_grad():
                                F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p)

                        def fwd_bwd():
                            F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p).backward(dout)
                            q.grad = k.grad = v.grad = None

                        f_ms = time_calls(fwd, warmup=3, iters=15)
                        fb_ms = time_calls(fwd_bwd, warmup=3, iters=15)
                    b_ms = fb_ms - f_ms
                    t.row(kernel=label, batch=batch, heads=heads, head_dim=hd, seq=seq, dropout=p,
                          fwd_ms=f"{f_ms:.4f}", bwd_ms=f"{b_ms:.4f}", fwd_tflops=f"{fwd_flop / f_ms / 1e9:.1f}",
                          bwd_tflops=f"{2.5 * fwd_flop / b_ms / 1e9:.1f}")
                    print(label[:5], seq, p, f"fwd {f_ms:.3f} bwd {b_ms:.3f}", flush=True)
                except Exception as e:  # noqa: BLE001 - a backend refusing dropout is recorded
                    t.row(kernel=label, batch=batch, heads=heads, head_dim=hd, seq=seq, dropout=p, fwd_ms="",
                          bwd_ms="", fwd_tflops=f"error: {type(e).__name__}: {e}"[:200], bwd_tflops="")
                    print(label[:5], seq, p, "error", str(e)[:100], flush=True)
        del q, k, v, dout
        torch.cuda.empty_cache()
    print("dropout done", round(time.time() - START), "s", flush=True)


def main():
    main_for(__doc__, {"dropout": measure}, budget_s=120.0)


if __name__ == "__main__":
    sys.exit(main())
