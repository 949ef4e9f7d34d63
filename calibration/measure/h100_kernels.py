#!/usr/bin/env python3
"""Single-GPU kernel measurements for parplan's H100 efficiency curves.

Run on one H100 (or any CUDA GPU; the device is recorded in every row):

    python3 calibration/measure/h100_kernels.py --out DIR [--budget-s 330]

Writes DIR/gemm.csv, DIR/attention.csv, DIR/moe_gemm.csv, DIR/layer.csv and
DIR/memory.csv,
a row at a time (a run cut short keeps what it measured). Every row carries
the date, device, driver, torch, CUDA and cuDNN versions and the kernel.

Method: random normal inputs (zeros run faster than real data), warm-up
before timing, CUDA events around each call, the median of the timed calls;
small GEMMs rotate over several input sets so that repeats do not run from
L2. The card's clocks and power limit are left as found and recorded.
"""
import argparse
import csv
import datetime
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

START = time.time()


def smi(query):
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
        return out.splitlines()[0] if out else ""
    except Exception as e:  # noqa: BLE001 - recorded, not fatal
        return f"unavailable: {e}"


def meta():
    return {
        "date": datetime.date.today().isoformat(),
        "device": torch.cuda.get_device_name(0),
        "driver": smi("driver_version"),
        "power_limit": smi("power.limit"),
        "max_sm_clock": smi("clocks.max.sm"),
        "torch": torch.__version__,
        "cuda": torch.version.cuda or "",
        "cudnn": str(torch.backends.cudnn.version()),
    }


class Table:
    def __init__(self, path, fields, meta_row):
        self.meta = meta_row
        self.file = open(path, "w", newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=list(meta_row) + fields)
        self.writer.writeheader()

    def row(self, **values):
        self.writer.writerow({**self.meta, **values})
        self.file.flush()


def event_ms(run, before=None):
    """GPU milliseconds of run() between two CUDA events, after before()
    (queued first, outside the events) and a synchronize."""
    if before is not None:
        before()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    run()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b)


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def time_calls(fn, warmup=3, iters=10):
    """Median milliseconds per call of fn(), over `iters` event-timed batches.

    A batch queues enough calls back to back to fill about 2 ms, as a
    training step queues its kernels ahead of the GPU: a call timed alone
    would also count the host's launch latency (about 10-20 us), which
    dominates small GEMMs."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    batch = max(1, min(200, int(2.0 / max(event_ms(fn), 1e-3))))

    def run():
        for _ in range(batch):
            fn()
    return median([event_ms(run) / batch for _ in range(iters)])


def over_budget(args, section):
    if time.time() - START > args.budget_s:
        print(f"budget spent: skipping {section}", flush=True)
        return True
    return False


# ---------------------------------------------------------------- GEMMs ----
FP8 = torch.float8_e4m3fn


def gemm_inputs(m, k, n, precision, sets):
    """A row-major (m, k), B column-major (k, n): the TN layout nn.Linear and
    Transformer Engine's fp8 GEMMs use."""
    out = []
    for _ in range(sets):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        if precision == "fp8":
            a, b = a.to(FP8), b.to(FP8)
        out.append((a, b.t()))
    return out


def gemm_ms(m, k, n, precision):
    bytes_per_set = (m * k + k * n) * (1 if precision == "fp8" else 2)
    sets = max(1, min(8, int(256e6 // max(bytes_per_set, 1))))
    inputs = gemm_inputs(m, k, n, precision, sets)
    one = torch.ones((), device="cuda", dtype=torch.float32)
    state = {"i": 0}

    def call():
        a, b = inputs[state["i"] % sets]
        state["i"] += 1
        if precision == "fp8":
            torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        else:
            torch.mm(a, b)

    flop = 2.0 * m * k * n
    iters = 10 if flop > 1e12 else 30
    return time_calls(call, warmup=3, iters=iters)


def transformer_gemms():
    """(model, linear, tp, m_tokens, pass, m, k, n) for Llama-shaped layers."""
    models = {  # hidden, ffn, heads, kv heads, head dim (Llama 3 8B, 70B)
        "llama3-8b": (4096, 14336, 32, 8, 128),
        "llama3-70b": (8192, 28672, 64, 8, 128),
    }
    for model, (h, ffn, heads, kv, hd) in models.items():
        for tp in (1, 2, 4, 8):
            linears = {
                "qkv": (h, (heads + 2 * kv) * hd // tp),
                "proj": (heads * hd // tp, h),
                "fc1": (h, 2 * ffn // tp),
                "fc2": (ffn // tp, h),
            }
            for tokens in (2048, 8192):
                for linear, (k, n) in linears.items():
                    # forward y = x W^T; input grad dx = dy W; weight grad dW = dy^T x
                    yield model, linear, tp, tokens, "fprop", tokens, k, n
                    yield model, linear, tp, tokens, "dgrad", tokens, n, k
                    yield model, linear, tp, tokens, "wgrad", n, tokens, k


def measure_gemms(args, meta_row):
    t = Table(os.path.join(args.out, "gemm.csv"),
              ["kernel", "precision", "shape_set", "model", "linear", "tp", "tokens", "pass", "m", "k", "n",
               "median_ms", "tflops"], meta_row)
    shapes = [("square", "", "", 0, 0, "", s, s, s) for s in (256, 512, 1024, 2048, 4096, 8192, 16384)]
    shapes += [("transformer",) + g for g in transformer_gemms()]
    for precision in ("bf16", "fp8"):
        kernel = "cublasLt via torch._scaled_mm (e4m3, per-tensor scale)" if precision == "fp8" else \
            "cublasLt via torch.mm"
        for shape_set, model, linear, tp, tokens, gpass, m, k, n in shapes:
            if over_budget(args, "gemms"):
                return
            try:
                ms = gemm_ms(m, k, n, precision)
                t.row(kernel=kernel, precision=precision, shape_set=shape_set, model=model, linear=linear, tp=tp,
                      tokens=tokens, **{"pass": gpass}, m=m, k=k, n=n, median_ms=f"{ms:.5f}",
                      tflops=f"{2.0 * m * k * n / ms / 1e9:.1f}")
            except Exception as e:  # noqa: BLE001 - a shape a kernel refuses is recorded
                t.row(kernel=kernel, precision=precision, shape_set=shape_set, model=model, linear=linear, tp=tp,
                      tokens=tokens, **{"pass": gpass}, m=m, k=k, n=n, median_ms="", tflops=f"error: {e}"[:200])
        torch.cuda.empty_cache()
    print("gemms done", round(time.time() - START), "s", flush=True)


# ------------------------------------------------------------ attention ----
def sdpa_pass_ms(backend, b, h, sq, sk, hd, causal, reps):
    """Median forward and backward milliseconds of SDPA on one backend,
    each call timed alone after one warm-up."""
    from torch.nn.attention import sdpa_kernel
    q = torch.randn(b, h, sq, hd, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k, v = (torch.randn(b, h, sk, hd, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(2))
    dout = torch.randn(b, h, sq, hd, device="cuda", dtype=torch.bfloat16)
    fwd, bwd = [], []
    with sdpa_kernel([backend]):
        for i in range(1 + reps):
            e0, e1, e2 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
            e0.record()
            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            e1.record()
            out.backward(dout)
            e2.record()
            torch.cuda.synchronize()
            q.grad = k.grad = v.grad = None
            if i > 0:
                fwd.append(e0.elapsed_time(e1))
                bwd.append(e1.elapsed_time(e2))
    fwd.sort()
    bwd.sort()
    return fwd[len(fwd) // 2], bwd[len(bwd) // 2]


def measure_attention(args, meta_row):
    from torch.nn.attention import SDPBackend
    t = Table(os.path.join(args.out, "attention.csv"),
              ["kernel", "batch", "heads", "head_dim", "seq", "causal", "fwd_ms", "bwd_ms", "fwd_tflops",
               "bwd_tflops", "flop_convention"], meta_row)
    backends = [("flash (SDPA FlashAttention-2)", SDPBackend.FLASH_ATTENTION),
                ("cudnn (SDPA cuDNN fused attention)", SDPBackend.CUDNN_ATTENTION),
                ("efficient (SDPA memory-efficient, CUTLASS)", SDPBackend.EFFICIENT_ATTENTION)]
    heads, hd = 32, 128
    for seq in (2048, 4096, 8192, 16384, 32768, 65536, 131072):
        batch = max(1, 16384 // seq)  # 16k tokens per call up to 16k, as in the FlashAttention-3 paper
        for label, backend in backends:
            if over_budget(args, "attention"):
                return
            fwd_flop = 4.0 * batch * heads * seq * seq * hd / 2  # causal: half the score matrix
            try:
                f_ms, b_ms = sdpa_pass_ms(backend, batch, heads, seq, seq, hd, True, 2 if seq >= 65536 else 6)
                t.row(kernel=label, batch=batch, heads=heads, head_dim=hd, seq=seq, causal=1, fwd_ms=f"{f_ms:.4f}",
                      bwd_ms=f"{b_ms:.4f}", fwd_tflops=f"{fwd_flop / f_ms / 1e9:.1f}",
                      bwd_tflops=f"{2.5 * fwd_flop / b_ms / 1e9:.1f}",
                      flop_convention="fwd 4*b*h*s^2*d/2 (causal), bwd 2.5x fwd")
            except Exception as e:  # noqa: BLE001
                t.row(kernel=label, batch=batch, heads=heads, head_dim=hd, seq=seq, causal=1, fwd_ms="",
                      bwd_ms="", fwd_tflops=f"error: {e}"[:200], bwd_tflops="", flop_convention="")
            torch.cuda.empty_cache()
    print("attention done", round(time.time() - START), "s", flush=True)


# --------------------------------------------------------- MoE experts ----
def measure_moe(args, meta_row):
    """Expert GEMMs of a fine-grained MoE (Qwen3-30B-A3B: hidden 2048, expert
    ffn 768, 128 experts, top-8) at 8192 tokens per GPU, tokens spread evenly
    over the local experts: one grouped GEMM versus one GEMM per expert."""
    t = Table(os.path.join(args.out, "moe_gemm.csv"),
              ["kernel", "local_experts", "tokens_per_expert", "linear", "m", "k", "n", "median_ms", "tflops"],
              meta_row)
    hidden, ffn, experts, topk, tokens = 2048, 768, 128, 8, 8192
    for ep in (1, 2, 4, 8, 16):
        if over_budget(args, "moe"):
            return
        local = experts // ep
        per_expert = tokens * topk // experts  # routed tokens arriving per expert after the all-to-all
        for linear, (k, n) in {"fc1": (hidden, 2 * ffn), "fc2": (ffn, hidden)}.items():
            x = torch.randn(local * per_expert, k, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(local, n, k, device="cuda", dtype=torch.bfloat16)
            flop = 2.0 * local * per_expert * k * n
            offs = torch.arange(per_expert, local * per_expert + 1, per_expert, device="cuda", dtype=torch.int32)
            runs = []
            if hasattr(torch, "_grouped_mm"):
                runs.append(("grouped (torch._grouped_mm)",
                             lambda: torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)))
            chunks = x.split(per_expert)
            runs.append(("one GEMM per expert (loop of torch.mm)",
                         lambda: [torch.mm(c, w[e].t()) for e, c in enumerate(chunks)]))
            for label, fn in runs:
                try:
                    ms = time_calls(fn, warmup=3, iters=20)
                    t.row(kernel=label, local_experts=local, tokens_per_expert=per_expert, linear=linear,
                          m=per_expert, k=k, n=n, median_ms=f"{ms:.5f}", tflops=f"{flop / ms / 1e9:.1f}")
                except Exception as e:  # noqa: BLE001
                    t.row(kernel=label, local_experts=local, tokens_per_expert=per_expert, linear=linear,
                          m=per_expert, k=k, n=n, median_ms="", tflops=f"error: {e}"[:200])
    print("moe done", round(time.time() - START), "s", flush=True)


# --------------------------------------------------------------- memory ----
def measure_memory(args, meta_row):
    """Memory-bound kernels: a device-to-device copy (the achievable HBM
    rate), the element-wise kernels of a Llama layer as eager PyTorch runs
    them and fused, and the cross-entropy over a 128K vocabulary. Bytes are
    the fewest each must move (inputs read once, outputs written once)."""
    t = Table(os.path.join(args.out, "memory.csv"),
              ["kernel", "shape", "min_bytes", "median_ms", "gb_per_s"], meta_row)
    tokens, hidden, ffn, vocab = 8192, 4096, 14336, 128256
    bf = torch.bfloat16

    def row(kernel, shape, min_bytes, fn):
        if over_budget(args, "memory"):
            return
        try:
            ms = time_calls(fn, warmup=3, iters=20)
            t.row(kernel=kernel, shape=shape, min_bytes=int(min_bytes), median_ms=f"{ms:.5f}",
                  gb_per_s=f"{min_bytes / ms / 1e6:.1f}")
        except Exception as e:  # noqa: BLE001
            t.row(kernel=kernel, shape=shape, min_bytes=int(min_bytes), median_ms="", gb_per_s=f"error: {e}"[:200])

    src = torch.randn(1 << 29, device="cuda", dtype=bf)  # 1 GiB
    dst = torch.empty_like(src)
    row("copy (dst.copy_(src))", "2^29 bf16", 2 * src.numel() * 2, lambda: dst.copy_(src))
    del src, dst
    x = torch.randn(tokens, hidden, device="cuda", dtype=bf)
    y = torch.randn(tokens, hidden, device="cuda", dtype=bf)
    w = torch.randn(hidden, device="cuda", dtype=bf)
    n = tokens * hidden
    row("residual add (x + y)", f"{tokens}x{hidden} bf16", 3 * 2 * n, lambda: x + y)

    def rms_eager(v):  # torchtitan's RMSNorm of 2024 (models/norms.py), one kernel per operator
        f = v.float()
        return (f * torch.rsqrt(f.pow(2).mean(-1, keepdim=True) + 1e-5)).type_as(v) * w

    row("RMSNorm eager, composed (torchtitan 2024)", f"{tokens}x{hidden} bf16", 2 * 2 * n, lambda: rms_eager(x))
    row("RMSNorm F.rms_norm", f"{tokens}x{hidden} bf16", 2 * 2 * n,
        lambda: F.rms_norm(x, (hidden,), w, 1e-5))
    rms_compiled = torch.compile(rms_eager)
    row("RMSNorm composed, torch.compile", f"{tokens}x{hidden} bf16", 2 * 2 * n, lambda: rms_compiled(x))
    a = torch.randn(tokens, ffn, device="cuda", dtype=bf)
    b = torch.randn(tokens, ffn, device="cuda", dtype=bf)
    m = tokens * ffn
    row("SwiGLU eager (F.silu(a) * b)", f"{tokens}x{ffn} bf16", 3 * 2 * m, lambda: F.silu(a) * b)
    swiglu = torch.compile(lambda p, q: F.silu(p) * q)
    row("SwiGLU torch.compile", f"{tokens}x{ffn} bf16", 3 * 2 * m, lambda: swiglu(a, b))
    del a, b
    torch.cuda.empty_cache()
    logits = torch.randn(tokens, vocab, device="cuda", dtype=bf, requires_grad=True)
    labels = torch.randint(0, vocab, (tokens,), device="cuda")
    logit_count = tokens * vocab

    def ce_eager():  # torchtitan's cross_entropy_loss: pred.flatten(0, 1).float()
        F.cross_entropy(logits.float(), labels).backward()
        logits.grad = None

    # Fewest bytes: read the bf16 logits (2) and write their bf16 gradient (2).
    row("cross-entropy eager fp32 upcast, fwd+bwd", f"{tokens}x{vocab} bf16", 4 * logit_count, ce_eager)
    ce_compiled = torch.compile(lambda z, l: F.cross_entropy(z.float(), l))

    def ce_comp():
        ce_compiled(logits, labels).backward()
        logits.grad = None

    row("cross-entropy torch.compile, fwd+bwd", f"{tokens}x{vocab} bf16", 4 * logit_count, ce_comp)
    print("memory done", round(time.time() - START), "s", flush=True)


# ---------------------------------------------------------------- layer ----
class Layer(torch.nn.Module):
    """A Llama decoder layer as torchtitan writes it: RMSNorm, GQA attention
    with RoPE (repeat_kv, SDPA causal), RMSNorm, SwiGLU MLP, residuals."""

    def __init__(self, h, ffn, heads, kv, hd):
        super().__init__()
        self.heads, self.kv, self.hd = heads, kv, hd
        self.wq = torch.nn.Linear(h, heads * hd, bias=False)
        self.wk = torch.nn.Linear(h, kv * hd, bias=False)
        self.wv = torch.nn.Linear(h, kv * hd, bias=False)
        self.wo = torch.nn.Linear(heads * hd, h, bias=False)
        self.w1 = torch.nn.Linear(h, ffn, bias=False)
        self.w3 = torch.nn.Linear(h, ffn, bias=False)
        self.w2 = torch.nn.Linear(ffn, h, bias=False)
        self.n1 = torch.nn.RMSNorm(h, eps=1e-5)
        self.n2 = torch.nn.RMSNorm(h, eps=1e-5)

    @staticmethod
    def rope(x, cos, sin):
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        y = self.n1(x)
        q = self.wq(y).view(b, s, self.heads, self.hd)
        k = self.wk(y).view(b, s, self.kv, self.hd)
        v = self.wv(y).view(b, s, self.kv, self.hd)
        q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
        rep = self.heads // self.kv
        k = k.repeat_interleave(rep, dim=2)
        v = v.repeat_interleave(rep, dim=2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                           is_causal=True)
        x = x + self.wo(a.transpose(1, 2).reshape(b, s, -1))
        y = self.n2(x)
        return x + self.w2(F.silu(self.w1(y)) * self.w3(y))


def measure_layer(args, meta_row):
    t = Table(os.path.join(args.out, "layer.csv"),
              ["model", "mode", "attention_backend", "batch", "seq", "hidden", "ffn", "heads", "kv_heads",
               "fwd_bwd_ms", "model_tflop", "model_tflops", "flop_convention"], meta_row)
    models = {"llama3-8b": (4096, 14336, 32, 8, 128), "llama3-70b": (8192, 28672, 64, 8, 128)}
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"SDPA default": None, "flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
    runs = [(mode, backend, model, seq) for mode in ("eager", "compiled") for model in models
            for backend in (backends if mode == "eager" else ["SDPA default"]) for seq in (4096, 8192)]
    for mode, backend, model, seq in runs:
        h, ffn, heads, kv, hd = models[model]
        if over_budget(args, "layer"):
            return
        try:
            torch.manual_seed(0)
            layer = Layer(h, ffn, heads, kv, hd).cuda().to(torch.bfloat16)
            fn = torch.compile(layer) if mode == "compiled" else layer
            x = torch.randn(1, seq, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            pos = torch.arange(seq, device="cuda", dtype=torch.float32)[:, None]
            freq = 1.0 / (500000.0 ** (torch.arange(0, hd, 2, device="cuda", dtype=torch.float32) / hd))
            ang = (pos * freq)[None, :, None, :]
            cos, sin = ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16)
            dy = torch.randn(1, seq, h, device="cuda", dtype=torch.bfloat16)

            def step():
                fn(x, cos, sin).backward(dy)
                x.grad = None
                for p in layer.parameters():
                    p.grad = None

            if backends[backend] is None:
                ms = time_calls(step, warmup=3, iters=10)
            else:
                with sdpa_kernel([backends[backend]]):
                    ms = time_calls(step, warmup=3, iters=10)
            # 6 * params * tokens for the GEMMs plus causal attention
            # 3 * 4 * s^2 * h / 2 (the FLOP convention of MFU reports)
            params = h * (heads * hd + 2 * kv * hd) + heads * hd * h + 3 * h * ffn
            flop = 6.0 * params * seq + 3 * 4.0 * seq * seq * heads * hd / 2
            t.row(model=model, mode=mode, attention_backend=backend, batch=1, seq=seq, hidden=h,
                  ffn=ffn, heads=heads, kv_heads=kv, fwd_bwd_ms=f"{ms:.4f}", model_tflop=f"{flop / 1e12:.4f}",
                  model_tflops=f"{flop / ms / 1e9:.1f}",
                  flop_convention="6*params*tokens + 6*s^2*heads*head_dim (causal)")
            del layer, fn, x, dy
        except Exception as e:  # noqa: BLE001
            t.row(model=model, mode=mode, attention_backend=backend, batch=1, seq=seq, hidden=h,
                  ffn=ffn, heads=heads, kv_heads=kv, fwd_bwd_ms="", model_tflop="",
                  model_tflops=f"error: {e}"[:200], flop_convention="")
        torch.cuda.empty_cache()
    print("layer done", round(time.time() - START), "s", flush=True)


def run_sections(args, sections):
    """Runs the --only sections in order into args.out, each row tagged with
    the device's metadata; reports the clocks and power at the end."""
    os.makedirs(args.out, exist_ok=True)
    m = meta()
    print(m, flush=True)
    for name in args.only.split(","):
        sections[name](args, m)
    print("total", round(time.time() - START), "s;", smi("clocks.sm,power.draw,temperature.gpu"), flush=True)


def section_parser(doc, budget_s, only):
    """The measurement scripts' command line: --out DIR, --budget-s, --only
    (comma-separated section names)."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--budget-s", type=float, default=budget_s, help="stop starting new measurements after this")
    p.add_argument("--only", default=only)
    return p


def main_for(doc, sections, budget_s, parser=None, allow_tf32=False):
    """Parses the command line (section_parser, every section by default)
    and runs the sections asked for; fp32 matmuls stay fp32 unless allowed."""
    args = (parser or section_parser(doc, budget_s, ",".join(sections))).parse_args()
    if not allow_tf32:
        torch.backends.cuda.matmul.allow_tf32 = False
    run_sections(args, sections)


def main():
    main_for(__doc__, {"gemm": measure_gemms, "attention": measure_attention, "moe": measure_moe,
                       "layer": measure_layer, "memory": measure_memory}, budget_s=330.0)


if __name__ == "__main__":
    sys.exit(main())
