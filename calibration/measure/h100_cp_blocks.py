#!/usr/bin/env python3
"""Context-parallel attention on one GPU: the non-causal kernels and one
rank's ring loop, as PyTorch's experimental context_parallel runs them.

    python3 calibration/measure/h100_cp_blocks.py --out DIR [--budget-s 240]

Writes DIR/attention_noncausal.csv (SDPA's flash and cuDNN kernels,
non-causal, square and the rectangular blocks a load-balanced ring runs)
DIR/cp_ring_rank.csv (rank r's forward and backward of
_templated_ring_attention at cp = 2, 4, 8 without the collectives: the
per-block flash kernels and the fp32 merges by log-sum-exp, eager or with
the merges compiled; beside it the same blocks' kernels alone) and DIR/power_clocks.csv (the SM clock
and board power under sustained GEMM, attention and copy loads). Every row
carries the device, driver, torch, CUDA and cuDNN versions.

The ring follows torch/distributed/tensor/experimental/_attention.py as
torchtitan ran it in late 2024 (load balancing on, convert_to_f32 on):
rank r holds chunks r and 2c-1-r (s_l tokens). Step 0 attends its own K/V
causally; step i = 1..c-1 takes rank (r - i)'s K/V: i <= r all s_l queries
x the first s_l/2 keys, i > r the second s_l/2 queries x all s_l keys; each
block's output is cast to fp32 and merged, out - sigmoid(lse_b - lse) *
(out - out_b), lse - logsigmoid(lse - lse_b), a second-half block through
a concatenation of the two halves. Backward: fp32 dQ, dK, dV; one flash
backward per block with the merged out and lse; each block's gradients
added in fp32 (half blocks through a concatenation). The exchanges are
left out: what is timed is what the rank's compute stream runs.
"""
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h100_kernels import Table, main_for, sdpa_pass_ms, section_parser, smi  # noqa: E402

START = time.time()
HD = 128
ATEN = torch.ops.aten


def over(args, what):
    if time.time() - START > args.budget_s:
        print(f"budget spent: skipping {what}", flush=True)
        return True
    return False


def events(n):
    return [torch.cuda.Event(enable_timing=True) for _ in range(n)]


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def rand(*shape, grad=False):
    return torch.randn(*shape, device="cuda", dtype=torch.bfloat16, requires_grad=grad)


# ------------------------------------------------------- non-causal kernels --
def measure_noncausal(args, m):
    from torch.nn.attention import SDPBackend
    t = Table(os.path.join(args.out, "attention_noncausal.csv"),
              ["kernel", "batch", "heads", "head_dim", "seq_q", "seq_k", "causal", "fwd_ms", "bwd_ms",
               "fwd_tflops", "bwd_tflops", "flop_convention"], m)
    backends = [("flash (SDPA FlashAttention-2)", SDPBackend.FLASH_ATTENTION),
                ("cudnn (SDPA cuDNN fused attention)", SDPBackend.CUDNN_ATTENTION)]
    shapes = [(s, s) for s in (2048, 4096, 8192, 16384, 32768, 65536)]
    # the load-balanced ring's off-diagonal blocks: s_l x s_l/2 and s_l/2 x s_l
    shapes += [(s, s // 2) for s in (8192, 32768)] + [(s // 2, s) for s in (8192, 32768)]
    for sq, sk in shapes:
        batch = max(1, 16384 // max(sq, sk))
        for label, backend in backends:
            if over(args, "noncausal"):
                return
            flop = 4.0 * batch * 32 * sq * sk * HD
            try:
                f_ms, b_ms = sdpa_pass_ms(backend, batch, 32, sq, sk, HD, False, 2 if sq * sk >= 2 ** 30 else 5)
                t.row(kernel=label, batch=batch, heads=32, head_dim=HD, seq_q=sq, seq_k=sk, causal=0,
                      fwd_ms=f"{f_ms:.4f}", bwd_ms=f"{b_ms:.4f}", fwd_tflops=f"{flop / f_ms / 1e9:.1f}",
                      bwd_tflops=f"{2.5 * flop / b_ms / 1e9:.1f}",
                      flop_convention="fwd 4*b*h*sq*sk*d (non-causal), bwd 2.5x fwd")
            except Exception as e:  # noqa: BLE001 - a shape a kernel refuses is recorded
                t.row(kernel=label, batch=batch, heads=32, head_dim=HD, seq_q=sq, seq_k=sk, causal=0, fwd_ms="",
                      bwd_ms="", fwd_tflops=f"error: {e}"[:200], bwd_tflops="", flop_convention="")
            torch.cuda.empty_cache()
    print("noncausal done", round(time.time() - START), "s", flush=True)


# ------------------------------------------------------------- ring loop --
def flash_fwd(q, k, v, causal):
    r = ATEN._scaled_dot_product_flash_attention(q, k, v, 0.0, causal, False)
    return r[0], r[1], tuple(r[2:8])  # out [b,h,s,d] bf16, lse [b,h,s] fp32, backward's aux


def flash_bwd(dout, q, k, v, out, lse, causal, aux):
    """aux: the forward's (cum_seq_q, cum_seq_k, max_q, max_k, philox_seed,
    philox_offset), passed back as the ring's backward does."""
    cq, ck, mq, mk, seed, offset = aux
    return ATEN._scaled_dot_product_flash_attention_backward(dout, q, k, v, out, lse, cq, ck, mq, mk, 0.0, causal,
                                                              seed, offset)


def merge(out, lse, out_b, lse_b):
    """_SDPAMerger._merge_one: fp32 running output and log-sum-exp."""
    lse_b = lse_b.unsqueeze(-1)
    out_b = out_b.to(torch.float32)
    out = out - torch.sigmoid(lse_b - lse) * (out - out_b)
    lse = lse - F.logsigmoid(lse - lse_b)
    return out, lse


def ring_rank(c, r, h, s_l, merge_fn, only_kernels):
    """One rank's forward and backward; returns (fwd_ms, bwd_ms)."""
    half = s_l // 2
    q = rand(1, h, s_l, HD)
    kv = [(rand(1, h, s_l, HD), rand(1, h, s_l, HD)) for _ in range(3)]  # own + one other rank's (reused)
    dout = rand(1, h, s_l, HD)
    e = events(3)
    e[0].record()
    o0, l0, a0 = flash_fwd(q, kv[0][0], kv[0][1], True)
    aux = [a0]
    out, lse = o0.to(torch.float32), l0.unsqueeze(-1)
    for i in range(1, c):
        k, v = kv[1]
        if i <= r:
            ob, lb, a = flash_fwd(q, k[:, :, :half], v[:, :, :half], False)
            aux.append(a)
            if not only_kernels:
                out, lse = merge_fn(out, lse, ob, lb)
        else:
            ob, lb, a = flash_fwd(q[:, :, half:], k, v, False)
            aux.append(a)
            if not only_kernels:
                o2, l2 = merge_fn(out[:, :, half:], lse[:, :, half:], ob, lb)
                out = torch.cat([out[:, :, :half], o2], dim=2)
                lse = torch.cat([lse[:, :, :half], l2], dim=2)
    out16 = out.to(torch.bfloat16)
    lse_f = lse.squeeze(-1).contiguous()
    e[1].record()
    dq = torch.zeros(1, h, s_l, HD, device="cuda", dtype=torch.float32)
    dk = torch.zeros_like(dq)
    dv = torch.zeros_like(dq)
    g = flash_bwd(dout, q, kv[0][0], kv[0][1], out16, lse_f, True, aux[0])
    if not only_kernels:
        dq += g[0]
        dk += g[1]
        dv += g[2]
    for i in range(1, c):
        k, v = kv[1]
        if i <= r:
            g = flash_bwd(dout, q, k[:, :, :half], v[:, :, :half], out16, lse_f, False, aux[i])
            if not only_kernels:
                dq += g[0]
                # the half-KV gradient joins the sender's dK/dV through a concatenation
                dk = torch.cat([dk[:, :, :half] + g[1], dk[:, :, half:]], dim=2)
                dv = torch.cat([dv[:, :, :half] + g[2], dv[:, :, half:]], dim=2)
        else:
            g = flash_bwd(dout[:, :, half:], q[:, :, half:], k, v, out16[:, :, half:],
                          lse_f[:, :, half:].contiguous(), False, aux[i])
            if not only_kernels:
                dq = torch.cat([dq[:, :, :half], dq[:, :, half:] + g[0]], dim=2)
                dk += g[1]
                dv += g[2]
        if not only_kernels:
            torch.cat([dk, dv]).contiguous()  # the fp32 dK/dV send buffer
    if not only_kernels:
        dq.to(torch.bfloat16), dk.to(torch.bfloat16), dv.to(torch.bfloat16)
    e[2].record()
    torch.cuda.synchronize()
    return e[0].elapsed_time(e[1]), e[1].elapsed_time(e[2])


def measure_ring(args, m):
    t = Table(os.path.join(args.out, "cp_ring_rank.csv"),
              ["kernel", "variant", "cp", "rank", "heads", "head_dim", "local_tokens", "seq", "fwd_ms", "bwd_ms",
               "attn_tflop_fwd", "fwd_tflops", "bwd_tflops", "flop_convention"], m)
    compiled = torch.compile(merge, dynamic=False)
    variants = [("kernels only", merge, True), ("eager merges", merge, False),
                ("compiled merges", compiled, False)]
    configs = [(h, c, r) for h in (32, 16)  # Llama 3.1 8B (KV repeated to 32 heads); 405B at tp 8 (16 heads)
               for c in (2, 4, 8) for r in sorted({0, c - 1})]
    s_l = 32768
    for vname, fn, only in variants:  # compiled last: its compilations take the longest
        for h, c, r in configs:
            if over(args, "ring"):
                return
            # the rank's causal FLOPs: 1/c of the full sequence's causal attention
            s = s_l * c
            flop = 4.0 * h * s * s * HD / 2 / c
            try:
                ring_rank(c, r, h, s_l, fn, only)  # warm-up (and compilation)
                runs = [ring_rank(c, r, h, s_l, fn, only) for _ in range(3)]
                f_ms = median([x[0] for x in runs])
                b_ms = median([x[1] for x in runs])
                t.row(kernel="flash (aten._scaled_dot_product_flash_attention)", variant=vname, cp=c, rank=r,
                      heads=h, head_dim=HD, local_tokens=s_l, seq=s, fwd_ms=f"{f_ms:.3f}",
                      bwd_ms=f"{b_ms:.3f}", attn_tflop_fwd=f"{flop / 1e12:.3f}",
                      fwd_tflops=f"{flop / f_ms / 1e9:.1f}", bwd_tflops=f"{2.5 * flop / b_ms / 1e9:.1f}",
                      flop_convention="rank's share of causal 4*h*s^2*d/2 / cp; bwd 2.5x")
            except Exception as e:  # noqa: BLE001
                t.row(kernel="flash", variant=vname, cp=c, rank=r, heads=h, head_dim=HD, local_tokens=s_l,
                      seq=s, fwd_ms="", bwd_ms="", attn_tflop_fwd="", fwd_tflops=f"error: {e}"[:200],
                      bwd_tflops="", flop_convention="")
            torch.cuda.empty_cache()
        print("ring", vname, "done", round(time.time() - START), "s", flush=True)


# ------------------------------------------------- clocks and power draw --
def sample_smi(stop, samples):
    """SM clock, board power, clock-event reasons and GPU temperature, every
    0.2 s until stopped."""
    import subprocess
    while not stop.is_set():
        try:
            samples.append(subprocess.run(
                ["nvidia-smi", "--query-gpu=clocks.sm,power.draw,clocks_throttle_reasons.active,temperature.gpu",
                 "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=10).stdout.strip()
                .splitlines()[0])
        except Exception:  # noqa: BLE001 - a missed sample is skipped
            pass
        stop.wait(0.2)


def sustained(fn, seconds, batch):
    """Runs fn back to back for `seconds` while sampling nvidia-smi: (calls,
    GPU seconds, samples past the first quarter's ramp as field lists)."""
    import threading
    fn()
    torch.cuda.synchronize()
    samples, stop = [], threading.Event()
    th = threading.Thread(target=sample_smi, args=(stop, samples))
    e0, e1 = events(2)
    calls = 0
    t0 = time.time()
    e0.record()
    th.start()
    while time.time() - t0 < seconds:
        for _ in range(batch):
            fn()
        calls += batch
        torch.cuda.synchronize()
    e1.record()
    torch.cuda.synchronize()
    stop.set()
    th.join()
    return calls, e0.elapsed_time(e1) / 1e3, [x.split(",") for x in samples[len(samples) // 4:]]


def column(samples, i):
    return [float(x[i]) for x in samples if len(x) > i and x[i].strip()]


def measure_power(args, m):
    """Each workload run back to back for about 6 s while nvidia-smi samples
    the SM clock and the board power: which kernels the power limit slows."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    t = Table(os.path.join(args.out, "power_clocks.csv"),
              ["workload", "tflops_or_tb_per_s", "unit", "samples", "median_sm_mhz", "median_power_w",
               "throttle_reasons", "power_limit", "max_power_limit"], m)
    n = 8192
    a, b = rand(n, n), rand(n, n)
    a8, b8 = a.to(torch.float8_e4m3fn), b.t().contiguous().to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda", dtype=torch.float32)
    q, k, v = (rand(1, 32, 16384, HD, grad=True) for _ in range(3))
    dout = rand(1, 32, 16384, HD)
    big = torch.empty(2 ** 29, device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(big)
    att_flop = 4.0 * 32 * 16384 ** 2 * HD / 2 * 3.5  # causal forward + backward (2.5x)

    def attn(backend):
        def f():
            with sdpa_kernel([backend]):
                F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(dout)
        return f

    workloads = [
        ("bf16 GEMM 8192^3 (torch.mm)", lambda: torch.mm(a, b), 2.0 * n ** 3, "TFLOP/s"),
        ("fp8 GEMM 8192^3 (torch._scaled_mm)",
         lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16), 2.0 * n ** 3,
         "TFLOP/s"),
        ("FlashAttention-2 causal fwd+bwd 16k x 32 heads", attn(SDPBackend.FLASH_ATTENTION), att_flop, "TFLOP/s"),
        ("cuDNN attention causal fwd+bwd 16k x 32 heads", attn(SDPBackend.CUDNN_ATTENTION), att_flop, "TFLOP/s"),
        ("copy 1 GiB bf16 (read + write)", lambda: dst.copy_(big), 2.0 * big.numel() * 2, "TB/s"),
    ]
    for name, fn, work, unit in workloads:
        if over(args, "power"):
            return
        try:
            calls, gpu_s, keep = sustained(fn, 6.0, 8)
            rate = work * calls / gpu_s / 1e12
            t.row(workload=name, tflops_or_tb_per_s=f"{rate:.1f}" if unit != "TB/s" else f"{rate:.3f}", unit=unit,
                  samples=len(keep), median_sm_mhz=median(column(keep, 0)), median_power_w=median(column(keep, 1)),
                  throttle_reasons=" ".join(sorted({x[2].strip() for x in keep})), power_limit=smi("power.limit"),
                  max_power_limit=smi("power.max_limit"))
        except Exception as e:  # noqa: BLE001
            t.row(workload=name, tflops_or_tb_per_s="", unit=unit, samples=0, median_sm_mhz="",
                  median_power_w=f"error: {e}"[:200], throttle_reasons="", power_limit="", max_power_limit="")
    print("power done", round(time.time() - START), "s", flush=True)


# ------------------------------ power per active SM, one GEMM kernel -----
def persistent_mm_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def mm(a_ptr, b_ptr, c_ptr, M, N, K, stride_bk, stride_bn, NUM_PROGS: tl.constexpr, BM: tl.constexpr,
           BN: tl.constexpr, BK: tl.constexpr):
        # one CTA per SM (its shared memory rules out two): grid = the SMs to load
        pid = tl.program_id(0)
        num_n = tl.cdiv(N, BN)
        tiles = tl.cdiv(M, BM) * num_n
        for tile in tl.range(pid, tiles, NUM_PROGS):
            pm = tile // num_n
            pn = tile % num_n
            rm = pm * BM + tl.arange(0, BM)
            rn = pn * BN + tl.arange(0, BN)
            rk = tl.arange(0, BK)
            a = a_ptr + rm[:, None] * K + rk[None, :]
            b = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for _ in range(0, K, BK):
                acc += tl.dot(tl.load(a), tl.load(b))
                a += BK
                b += BK * stride_bk
            tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16))
    return mm


def measure_power_curve(args, m):
    """One GEMM kernel (bf16, or fp8 with --dtype fp8) on k of the 132 SMs at
    the card's power limit:
    the fewer SMs draw, the higher the clock the limit allows, so the rows
    give the power the tensor-core work draws against the clock over the
    clocks a full GEMM cannot reach."""
    t = Table(os.path.join(args.out, "power_per_sm.csv"),
              ["kernel", "active_sms", "tflops", "samples", "median_sm_mhz", "median_power_w", "median_temp_c",
               "throttle_reasons"], m)
    with open(os.path.join(args.out, "nvidia-smi-q.txt"), "w") as f:
        import subprocess
        f.write(subprocess.run(["nvidia-smi", "-q", "-d", "VOLTAGE,POWER,CLOCK,PERFORMANCE,TEMPERATURE"],
                               capture_output=True, text=True).stdout)
    n = 8192
    a, b = rand(n, n), rand(n, n)
    if args.dtype == "fp8":  # B column-major, as cuBLASLt's fp8 GEMM takes it
        a, b = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda", dtype=torch.float32)
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    try:
        mm = persistent_mm_kernel()
    except Exception as e:  # noqa: BLE001
        print("triton unavailable:", e, flush=True)
        mm = None

    def run_for(name, k, fn):
        calls, gpu_s, keep = sustained(fn, args.seconds, 4)
        t.row(kernel=name, active_sms=k, tflops=f"{2.0 * n ** 3 * calls / gpu_s / 1e12:.1f}", samples=len(keep),
              median_sm_mhz=median(column(keep, 0)), median_power_w=median(column(keep, 1)),
              median_temp_c=median(column(keep, 3)), throttle_reasons=" ".join(sorted({x[2].strip() for x in keep})))

    try:
        if args.dtype == "fp8":
            run_for("cublasLt via torch._scaled_mm (fp8 e4m3)", sms,
                    lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
        else:
            run_for("cublasLt via torch.mm", sms, lambda: torch.mm(a, b, out=c))
    except Exception as e:  # noqa: BLE001
        print("cublas:", e, flush=True)
    if mm is None:
        return
    for k in args.sms_list or (sms, 120, 108, 96, 84, 72, 60, 48, 33, 16):
        if over(args, "power curve"):
            return
        try:
            label = "" if args.dtype == "bf16" else f" {args.dtype}"
            run_for(f"triton persistent tl.dot{label} 128x{args.block_n}x64, {args.stages} stages", k,
                    lambda k=k: mm[(k,)](a, b, c, n, n, n, b.stride(0), b.stride(1), NUM_PROGS=k, BM=128,
                                         BN=args.block_n, BK=64, num_warps=8, num_stages=args.stages))
        except Exception as e:  # noqa: BLE001
            t.row(kernel="triton", active_sms=k, tflops=f"error: {e}"[:200], samples=0, median_sm_mhz="",
                  median_power_w="", median_temp_c="", throttle_reasons="")
    print("power curve done", round(time.time() - START), "s", flush=True)


def main():
    p = section_parser(__doc__, 240.0, "ring,noncausal,power")
    p.add_argument("--seconds", type=float, default=4.0, help="powercurve: seconds per load")
    p.add_argument("--sms-list", type=lambda t: [int(x) for x in t.split(",")], default=None,
                   help="powercurve: the active-SM counts, comma-separated")
    p.add_argument("--block-n", type=int, default=128, help="powercurve: the kernel's N tile")
    p.add_argument("--stages", type=int, default=4, help="powercurve: the kernel's pipeline stages")
    p.add_argument("--dtype", choices=("bf16", "fp8"), default="bf16", help="powercurve: the GEMM's input type")
    main_for(__doc__, {"ring": measure_ring, "noncausal": measure_noncausal, "power": measure_power,
                       "powercurve": measure_power_curve}, budget_s=240.0, parser=p, allow_tf32=True)


if __name__ == "__main__":
    sys.exit(main())
