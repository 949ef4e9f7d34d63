#!/usr/bin/env python3
"""One tensor-parallel rank's share of a Llama 3 decoder layer on one H100,
without the collectives: what torchtitan's 2D runs (FSDP x TP 8, sequence
parallel) compute per rank per layer.

    python3 calibration/measure/h100_tp_layer.py --out DIR [--budget-s 300]

torchtitan's Llama (torchtitan/models/llama3/model/model.py @ v0.2.2) under
TP 8 with sequence parallelism: the norms and residuals run on the rank's
1/8 of the tokens; the projections (separate wq, wk, wv; w1, w3; then wo,
w2) on all the gathered tokens with 1/8 of the heads and FFN columns;
causal attention (SDPA's flash path) on the rank's query heads with its
key/value heads repeated. The all-gathers and reduce-scatters between
them are left out (a single GPU has none): the gathered input is the
rank's tokens repeated, the output's rows are summed to the rank's share
by a plain reshape-and-sum standing for the reduce-scatter's local add.
Writes DIR/tp_layer.csv: model, tp, local batch, seq, mode (eager /
compiled), forward + backward milliseconds (event-timed, the median of 10),
and the kernel classes' GPU milliseconds (torch.profiler) for compiled runs.
"""
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h100_fp8_layer import fwd_bwd_step, kernel_class  # noqa: E402
from h100_kernels import Table, main_for, over_budget, time_calls  # noqa: E402

START = time.time()

# model: (hidden, ffn, heads, kv heads, head dim, tp, local batch, seq)
SHAPES = [
    ("llama3.1-8b", 4096, 14336, 32, 8, 128, 8, 12, 8192),
    ("llama3-70b", 8192, 28672, 64, 8, 128, 8, 6, 8192),
    ("llama3.1-8b", 4096, 14336, 32, 8, 128, 1, 2, 8192),
]


class TpRankLayer(nn.Module):
    def __init__(self, h, ffn, heads, kv, hd, tp):
        super().__init__()
        self.tp, self.heads, self.kv, self.hd = tp, heads // tp, max(1, kv // tp), hd
        self.wq = nn.Linear(h, self.heads * hd, bias=False)
        self.wk = nn.Linear(h, self.kv * hd, bias=False)
        self.wv = nn.Linear(h, self.kv * hd, bias=False)
        self.wo = nn.Linear(self.heads * hd, h, bias=False)
        self.w1 = nn.Linear(h, ffn // tp, bias=False)
        self.w3 = nn.Linear(h, ffn // tp, bias=False)
        self.w2 = nn.Linear(ffn // tp, h, bias=False)
        self.n1 = nn.RMSNorm(h, eps=1e-5)
        self.n2 = nn.RMSNorm(h, eps=1e-5)

    @staticmethod
    def rope(x, cos, sin):
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)

    def gather(self, y):  # stands for the all-gather over the sequence: tp copies
        return y.repeat(1, self.tp, 1) if self.tp > 1 else y

    def scatter(self, y):  # stands for the reduce-scatter: the rank's rows
        b, s, h = y.shape
        return y.view(b, self.tp, s // self.tp, h).sum(dim=1) if self.tp > 1 else y

    def forward(self, x, cos, sin):
        b, s_local, _ = x.shape
        y = self.gather(self.n1(x))
        s = y.shape[1]
        q = self.wq(y).view(b, s, self.heads, self.hd)
        k = self.wk(y).view(b, s, self.kv, self.hd)
        v = self.wv(y).view(b, s, self.kv, self.hd)
        q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
        rep = self.heads // self.kv
        k, v = k.repeat_interleave(rep, dim=2), v.repeat_interleave(rep, dim=2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.scatter(self.wo(a.transpose(1, 2).reshape(b, s, -1)))
        y = self.gather(self.n2(x))
        return x + self.scatter(self.w2(F.silu(self.w1(y)) * self.w3(y)))


def measure(args, meta_row):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.profiler import ProfilerActivity, profile
    t = Table(os.path.join(args.out, "tp_layer.csv"),
              ["model", "tp", "local_batch", "seq", "gathered_tokens", "mode", "fwd_bwd_ms", "gemm_ms",
               "attention_ms", "elementwise_ms", "other_ms", "note"], meta_row)
    for mode in ("compiled", "eager"):
        for model, h, ffn, heads, kv, hd, tp, batch, seq in SHAPES:
            if over_budget(args, "tp layer"):
                return
            try:
                torch.manual_seed(0)
                layer = TpRankLayer(h, ffn, heads, kv, hd, tp).cuda().to(torch.bfloat16)
                fn = torch.compile(layer) if mode == "compiled" else layer
                x = torch.randn(batch, seq // tp, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                pos = torch.arange(seq, device="cuda", dtype=torch.float32)[:, None]
                freq = 1.0 / (500000.0 ** (torch.arange(0, hd, 2, device="cuda", dtype=torch.float32) / hd))
                ang = (pos * freq)[None, :, None, :]
                cos, sin = ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16)
                dy = torch.randn(batch, seq // tp, h, device="cuda", dtype=torch.bfloat16)

                step = fwd_bwd_step(layer, fn, x, cos, sin, dy)
                with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                    ms = time_calls(step, warmup=3, iters=10)
                    classes = {}
                    if mode == "compiled":
                        with profile(activities=[ProfilerActivity.CUDA]) as prof:
                            for _ in range(3):
                                step()
                            torch.cuda.synchronize()
                        for ev in prof.key_averages():
                            if str(ev.device_type) == "DeviceType.CUDA":
                                c = kernel_class(ev.key)
                                classes[c] = classes.get(c, 0.0) + ev.device_time_total / 1000.0 / 3
                t.row(model=model, tp=tp, local_batch=batch, seq=seq, gathered_tokens=batch * seq, mode=mode,
                      fwd_bwd_ms=f"{ms:.3f}", gemm_ms=f"{classes.get('gemm', 0):.3f}" if classes else "",
                      attention_ms=f"{classes.get('attention', 0):.3f}" if classes else "",
                      elementwise_ms=f"{classes.get('fused element-wise (Triton)', 0):.3f}" if classes else "",
                      other_ms=f"{classes.get('other', 0):.3f}" if classes else "",
                      note="collectives left out: gather by repeat, reduce-scatter by a local sum")
                print(model, tp, mode, f"{ms:.2f} ms", {k: round(v, 2) for k, v in classes.items()}, flush=True)
                del layer, fn, x, dy
            except Exception as e:  # noqa: BLE001
                t.row(model=model, tp=tp, local_batch=batch, seq=seq, gathered_tokens=batch * seq, mode=mode,
                      fwd_bwd_ms="", gemm_ms="", attention_ms="", elementwise_ms="", other_ms="",
                      note=f"error: {type(e).__name__}: {e}"[:300])
                print(model, tp, mode, "error", e, flush=True)
            torch.cuda.empty_cache()
    print("tp layer done", round(time.time() - START), "s", flush=True)


def main():
    main_for(__doc__, {"tp": measure}, budget_s=300.0)


if __name__ == "__main__":
    sys.exit(main())
