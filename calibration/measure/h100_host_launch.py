#!/usr/bin/env python3
"""Host time per kernel launch on the H100 machine's CPU, and what it does
to an eager MoE layer that waits on the host once per forward.

    python3 calibration/measure/h100_host_launch.py --out DIR [--budget-s 200]

Writes DIR/host_launch.csv: for small operands (the GPU finishes each
kernel long before the host issues the next) the wall time of N calls
queued back to back over N is the host's time per call: eager PyTorch ops
from Python (one kernel each unless noted), an nn.Linear forward and
backward through autograd, and a current-scaling fp8 cast written as
PyTorch ops (amax, scale, cast: the kernels Transformer Engine runs per
split, here each a Python op). DIR/moe_layer_host.csv: an eager MoE layer
of Qwen3-30B-A3B's shape (hidden 2048, expert ffn 768, top-8) with 16
local experts, 8192 tokens, a Python loop over the experts as in
Megatron's SequentialMLP, forward and backward: wall time per layer and
the GPU's busy time (CUDA events around the same work queued in a CUDA
graph-free loop), with the counts moved to the host (.tolist(), the
dropless dispatcher's wait) or known in advance (padded to capacity).
Also records the CPU model and whether Transformer Engine imports.
"""
import os
import platform
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h100_kernels import Table, event_ms, main_for, median  # noqa: E402

START = time.time()
FP8 = torch.float8_e4m3fn


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=20).stdout
        for line in out.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except Exception:  # noqa: BLE001
        pass
    return platform.processor()


def host_us_per_call(fn, calls=2000, reps=5):
    """Median over reps of (wall time of `calls` queued calls) / calls, and
    the GPU's event-timed span of the same calls over the wall time."""
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    walls, busy = [], []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        a.record()
        for _ in range(calls):
            fn()
        b.record()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        walls.append((t1 - t0) / calls * 1e6)
        busy.append(a.elapsed_time(b) * 1e3 / calls)
    walls.sort()
    busy.sort()
    return walls[reps // 2], busy[reps // 2]


def measure_launch(args, meta_row):
    t = Table(os.path.join(args.out, "host_launch.csv"),
              ["cpu", "op", "kernels", "host_us_per_call", "host_us_per_kernel", "gpu_span_us_per_call"],
              meta_row)
    cpu = cpu_model()
    x = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
    x8 = x.to(FP8)
    w8 = y.to(FP8).t()
    one = torch.ones((), device="cuda")
    lin = torch.nn.Linear(64, 64, bias=False, device="cuda", dtype=torch.bfloat16)
    xg = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)

    def cast_current():  # amax, scale, cast as three ops (TE fuses none of them across splits)
        amax = x.abs().amax()
        scale = 448.0 / amax.float()
        return (x.float() * scale).to(FP8)

    def linear_fwd_bwd():
        lin(xg).sum().backward()

    ops = [
        ("add (x + y)", 1, lambda: x + y),
        ("torch.mm 64x64", 1, lambda: torch.mm(x, y)),
        ("F.linear 64x64", 1, lambda: F.linear(x, y)),
        ("torch._scaled_mm fp8 64x64", 1,
         lambda: torch._scaled_mm(x8, w8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)),
        ("current-scaling cast as ops (abs, amax, float, div, float, mul, to fp8)", 7, cast_current),
        ("nn.Linear forward+sum+backward (autograd)", 5, linear_fwd_bwd),
    ]
    for label, kernels, fn in ops:
        host, span = host_us_per_call(fn, calls=1000 if kernels > 2 else 3000)
        t.row(cpu=cpu, op=label, kernels=kernels, host_us_per_call=f"{host:.2f}",
              host_us_per_kernel=f"{host / kernels:.2f}", gpu_span_us_per_call=f"{span:.2f}")
        print(label, round(host, 2), "us", flush=True)
    try:
        import transformer_engine  # noqa: F401
        te = f"transformer_engine {getattr(transformer_engine, '__version__', '?')}"
    except Exception as e:  # noqa: BLE001
        te = f"transformer_engine not importable: {type(e).__name__}"
    t.row(cpu=cpu, op=te, kernels="", host_us_per_call="", host_us_per_kernel="", gpu_span_us_per_call="")
    print(te, flush=True)


class EagerMoE(torch.nn.Module):
    """Router, permutation by expert, a Python loop of SwiGLU experts
    (Megatron's SequentialMLP), unpermutation and the weighted sum."""

    def __init__(self, hidden, ffn, local_experts, topk):
        super().__init__()
        self.topk, self.local = topk, local_experts
        self.router = torch.nn.Linear(hidden, local_experts, bias=False)
        self.fc1 = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.randn(2 * ffn, hidden) * 0.02) for _ in range(local_experts)])
        self.fc2 = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.randn(hidden, ffn) * 0.02) for _ in range(local_experts)])

    def forward(self, x, wait_on_host, split=None):
        probs = torch.softmax(self.router(x).float(), dim=-1)
        top_p, top_e = probs.topk(self.topk, dim=-1)
        flat_e = top_e.reshape(-1)
        order = flat_e.argsort(stable=True)
        rows = x.repeat_interleave(self.topk, dim=0)[order]
        if wait_on_host:
            split = torch.bincount(flat_e, minlength=self.local).tolist()  # the dropless wait
        outs = []
        for e, chunk in enumerate(rows.split(split)):
            h = F.linear(chunk, self.fc1[e])
            g, u = h.chunk(2, dim=-1)
            outs.append(F.linear(F.silu(g) * u, self.fc2[e]))
        y = torch.empty_like(rows)
        y[order] = torch.cat(outs)
        y = y.view(x.shape[0], self.topk, -1) * top_p.to(x.dtype).unsqueeze(-1)
        return y.sum(dim=1)


def measure_moe_layer(args, meta_row):
    t = Table(os.path.join(args.out, "moe_layer_host.csv"),
              ["cpu", "layer", "local_experts", "tokens", "topk", "host_wait", "wall_ms", "gpu_ms",
               "host_issue_ms", "kernels_per_layer"],
              meta_row)
    cpu = cpu_model()
    hidden, ffn, topk, tokens = 2048, 768, 8, 8192
    for local in (16, 4):
        moe = EagerMoE(hidden, ffn, local, min(topk, local)).cuda().to(torch.bfloat16)
        x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        even = [tokens * min(topk, local) // local] * local
        # Balanced routing as the rows' force-balanced router: bias the
        # router so every expert gets the same load (the host sees the same
        # split either way).
        with torch.no_grad():
            moe.router.weight.zero_()
        for wait in (True, False):
            def step():
                moe(x, wait, even).sum().backward()
            for _ in range(5):
                step()
            torch.cuda.synchronize()
            kernels, gpu_us = -1, float("nan")
            try:
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                    step()
                    torch.cuda.synchronize()
                dev = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
                kernels = len(dev)
                gpu_us = sum(getattr(e, "device_time", None) or getattr(e, "cuda_time", 0) for e in dev)
            except Exception as e:  # noqa: BLE001 - recorded as missing
                print("profiler:", e, flush=True)
            walls, issues = [], []
            for _ in range(9):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                step()
                t1 = time.perf_counter()
                torch.cuda.synchronize()
                t2 = time.perf_counter()
                issues.append((t1 - t0) * 1e3)
                walls.append((t2 - t0) * 1e3)
            walls.sort()
            issues.sort()
            t.row(cpu=cpu, layer="eager MoE, Python loop over experts (SequentialMLP), bf16, fwd+bwd",
                  local_experts=local, tokens=tokens, topk=min(topk, local),
                  host_wait="counts .tolist() before the experts" if wait else "split known (padded)",
                  wall_ms=f"{walls[4]:.3f}", gpu_ms=f"{gpu_us / 1e3:.3f}", host_issue_ms=f"{issues[4]:.3f}",
                  kernels_per_layer=kernels)
            print(local, wait, walls[4], gpu_us / 1e3, kernels, flush=True)


def graph_us_per_call(fn, calls, reps=7):
    """GPU microseconds per call of fn() with the host out of the way: `calls`
    calls captured in one CUDA graph and replayed (the median of reps)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    g.replay()
    torch.cuda.synchronize()
    return median([event_ms(g.replay) * 1e3 / calls for _ in range(reps)])


def queued_us_per_call(fn, calls, reps=7):
    """GPU microseconds per call with the host ahead of the GPU: a long
    kernel first, so the calls queue behind it, timed by events around
    the calls alone."""
    big = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)

    def ahead():  # about 1.7 ms per GEMM: the host queues the calls meanwhile
        for _ in range(max(1, calls // 40)):
            torch.mm(big, big)

    def run():
        for _ in range(calls):
            fn()
    return median([event_ms(run, ahead) * 1e3 / calls for _ in range(reps)])


def measure_kernel_floor(args, meta_row):
    """What a small kernel costs the GPU when the host is out of the way:
    element-wise passes and the current-scaling cast steps over one
    expert's split (Qwen3-30B-A3B at ep 8: 512 rows of 2048), against the
    same over all 16 experts' rows at once; and one expert GEMM."""
    t = Table(os.path.join(args.out, "kernel_floor.csv"),
              ["op", "rows", "cols", "kernels_per_call", "mode", "us_per_call", "us_per_kernel", "bytes_per_call"],
              meta_row)
    for rows in (1, 512, 8192):
        cols = 2048
        x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        amax = torch.zeros((), device="cuda", dtype=torch.float32)
        out8 = torch.empty(rows, cols, device="cuda", dtype=FP8)
        nbytes = x.numel() * x.element_size()

        def add_():
            x.add_(1.0)

        def amax_():
            amax.copy_(x.abs().amax())

        def cast_():
            out8.copy_(x * (448.0 / 8.0))

        for label, kernels, fn, b in (("in-place add", 1, add_, 2 * nbytes),
                                      ("abs, amax, copy (amax of the split)", 3, amax_, 2 * nbytes),
                                      ("scale and cast to fp8 (mul, copy)", 2, cast_, 2 * nbytes + rows * cols)):
            for mode, f in (("CUDA graph", graph_us_per_call), ("eager, host ahead", queued_us_per_call)):
                us = f(fn, 400)
                t.row(op=label, rows=rows, cols=cols, kernels_per_call=kernels, mode=mode,
                      us_per_call=f"{us:.3f}", us_per_kernel=f"{us / kernels:.3f}", bytes_per_call=int(b))
                print(label, rows, mode, round(us, 3), flush=True)
    for m, k, n in ((512, 2048, 1536), (512, 768, 2048), (8192, 2048, 1536)):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        for mode, f in (("CUDA graph", graph_us_per_call), ("eager, host ahead", queued_us_per_call)):
            us = f(lambda: torch.mm(a, w.t()), 200)
            t.row(op=f"bf16 GEMM {m}x{k}x{n} (torch.mm)", rows=m, cols=k, kernels_per_call=1, mode=mode,
                  us_per_call=f"{us:.3f}", us_per_kernel=f"{us:.3f}", bytes_per_call=2 * (m * k + n * k + m * n))
            print("gemm", m, k, n, mode, round(us, 3), flush=True)


def measure_expert_gemms(args, meta_row):
    """Expert GEMMs of fine-grained MoE layers, timed with the host ahead
    (queued behind a long GEMM) and from a CUDA graph, bf16 and fp8: the
    sizes the GEMM curve's fit left out (under 30 us, host-bound when
    timed one Python call at a time). Qwen3-30B-A3B (h 2048, f 768) at 512
    and 1024 rows per expert; Qwen3-235B-A22B (h 4096, f 1536) at 1024.
    Per shape: FC1 (rows x 2f x h), FC2 (rows x h x f) forward, their
    input-gradient GEMMs and weight-gradient GEMMs (K = rows)."""
    t = Table(os.path.join(args.out, "expert_gemm.csv"),
              ["model", "precision", "gemm", "m", "n", "k", "mode", "us_per_call", "tflops"], meta_row)
    one = torch.ones((), device="cuda")
    for model, h, f, rows in (("qwen3-30b-a3b", 2048, 768, 512), ("qwen3-30b-a3b", 2048, 768, 1024),
                              ("qwen3-235b-a22b", 4096, 1536, 1024)):
        shapes = [("fc1 fwd", rows, 2 * f, h), ("fc2 fwd", rows, h, f), ("fc1 dgrad", rows, h, 2 * f),
                  ("fc2 dgrad", rows, f, h), ("fc1 wgrad", 2 * f, h, rows), ("fc2 wgrad", h, f, rows)]
        for gemm, m, n, k in shapes:
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
            a8, b8 = a.to(FP8), b.to(FP8)
            for precision, fn in (("bf16", lambda: torch.mm(a, b.t())),
                                  ("fp8", lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one,
                                                                   out_dtype=torch.bfloat16))):
                for mode, timer in (("CUDA graph", graph_us_per_call), ("eager, host ahead", queued_us_per_call)):
                    try:
                        us = timer(fn, 200)
                        t.row(model=model, precision=precision, gemm=gemm, m=m, n=n, k=k, mode=mode,
                              us_per_call=f"{us:.3f}", tflops=f"{2.0 * m * n * k / us / 1e6:.1f}")
                    except Exception as e:  # noqa: BLE001 - recorded, not fatal
                        t.row(model=model, precision=precision, gemm=gemm, m=m, n=n, k=k, mode=mode,
                              us_per_call="", tflops=f"error: {e}"[:200])
        print("expert gemms", model, rows, flush=True)


def main():
    main_for(__doc__, {"launch": measure_launch, "moe_layer": measure_moe_layer,
                       "kernel_floor": measure_kernel_floor, "expert_gemm": measure_expert_gemms},
             budget_s=200.0, allow_tf32=True)


if __name__ == "__main__":
    sys.exit(main())
