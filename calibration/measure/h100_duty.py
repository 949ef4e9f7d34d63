#!/usr/bin/env python3
"""A GEMM's speed on a power-limited H100 against the share of the time it
runs: one 8192^3 GEMM, then memory-bound copies (or a spin kernel on one
SM, or FlashAttention-2's forward and backward) filling the rest, repeated
for a few seconds.

    python3 calibration/measure/h100_duty.py --out DIR [--seconds 3] [--only duty,bursts]

Inside a training step the GEMMs alternate with attention and memory-bound
kernels that draw less power, and the same GEMM kernels ran 9 to 15 %
faster inside a layer than back to back (calibration/h100-kernels/
fp8_layer_kernels.csv against nemo_gemm.csv). This measures that against
the GEMM's share of the time. Writes DIR/gemm_duty.csv: precision, filler,
target share, the GEMMs' median milliseconds (CUDA events around each
GEMM in the last two thirds of the run), their TFLOP/s, the share
measured (GEMM time over the run's GPU time), the median SM clock and
board power sampled by nvidia-smi past the first quarter. DIR/gemm_bursts.csv
(`--only bursts`): the GEMMs in unbroken bursts of 0.8 to 51 ms alternating
with copies of the same length: the GEMMs' median, the first and the last
GEMM of a burst, clock and power.
"""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h100_cp_blocks import column, events, median, sample_smi, sustained  # noqa: E402
from h100_kernels import Table, main_for, section_parser  # noqa: E402

START = time.time()


N = 8192


def gemms_and_copy():
    """A bf16 and an fp8 N^3 GEMM as calls, and a 64 MiB copy's source and
    destination."""
    a = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda", dtype=torch.float32)
    src = torch.randn(2 ** 25, device="cuda", dtype=torch.bfloat16)
    gemms = {"bf16": lambda: torch.mm(a, b),
             "fp8": lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)}
    return gemms, src, torch.empty_like(src)


def measure(args, meta_row):
    import threading
    t = Table(os.path.join(args.out, "gemm_duty.csv"),
              ["precision", "filler", "target_share", "gemm_ms", "gemm_tflops", "measured_share", "gemms",
               "filler_ms_per_call", "filler_ms_per_call_alone", "median_sm_mhz", "median_power_w"], meta_row)
    n = N
    gemms, src, dst = gemms_and_copy()

    def unit_ms(fn, reps=20):
        fn()
        torch.cuda.synchronize()
        e0, e1 = events(2)
        e0.record()
        for _ in range(reps):
            fn()
        e1.record()
        torch.cuda.synchronize()
        return e0.elapsed_time(e1) / reps

    copy_ms = unit_ms(lambda: dst.copy_(src))
    spin_cycles = 100000
    spin_ms = unit_ms(lambda: torch.cuda._sleep(spin_cycles))
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = (torch.randn(1, 32, 4096, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    dout = torch.randn(1, 32, 4096, 128, device="cuda", dtype=torch.bfloat16)

    def attention():
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).backward(dout)

    def back_to_back_ms(fn):  # the filler alone, queued back to back for about 1 s
        calls, gpu_s, _samples = sustained(fn, 1.0, 10)
        return gpu_s * 1e3 / calls

    fillers = {"copy 64 MiB": (lambda: dst.copy_(src), copy_ms), "spin (one SM)": (
        lambda: torch.cuda._sleep(spin_cycles), spin_ms)}
    if args.only_fillers:
        fillers = {name: fillers[name] for name in fillers if name in args.only_fillers.split(",")}
    fillers["FlashAttention-2 causal fwd+bwd 4096 x 32 heads"] = (attention, back_to_back_ms(attention))
    for precision, gemm in gemms.items():
        g_ms = unit_ms(gemm)
        for filler, (fill, f_ms) in fillers.items():
            for share in (1.0, 0.75, 0.5, 0.25):
                if time.time() - START > args.budget_s:
                    print("budget spent", flush=True)
                    return
                reps = 0 if share >= 1.0 else max(1, round(g_ms * (1 - share) / share / f_ms))
                samples, stop = [], threading.Event()
                th = threading.Thread(target=sample_smi, args=(stop, samples))
                pairs, t0 = [], time.time()
                r0, r1 = events(2)
                r0.record()
                th.start()
                fill_pairs = []
                while time.time() - t0 < args.seconds:
                    batch, fill_batch = [], []
                    for _ in range(8):
                        e0, e1, e2 = events(3)
                        e0.record()
                        gemm()
                        e1.record()
                        batch.append((e0, e1))
                        for _ in range(reps):
                            fill()
                        e2.record()
                        fill_batch.append((e1, e2))
                    torch.cuda.synchronize()
                    if time.time() - t0 > args.seconds / 3:
                        pairs.extend(batch)
                        fill_pairs.extend(fill_batch)
                r1.record()
                torch.cuda.synchronize()
                stop.set()
                th.join()
                times = [x.elapsed_time(y) for x, y in pairs]
                total_ms = r0.elapsed_time(r1)
                calls_all = len(times)
                keep = [x.split(",") for x in samples[len(samples) // 4:]]
                gm = median(times)
                fill_ms = median([x.elapsed_time(y) for x, y in fill_pairs]) / reps if reps else 0.0
                # the share over the timed part: GEMM time over GEMM + filler time
                measured = sum(times) / (sum(times) + calls_all * reps * fill_ms) if reps else 1.0
                t.row(precision=precision, filler=filler, target_share=share, gemm_ms=f"{gm:.4f}",
                      gemm_tflops=f"{2.0 * n ** 3 / gm / 1e9:.1f}", measured_share=f"{measured:.3f}",
                      gemms=calls_all, filler_ms_per_call=f"{fill_ms:.4f}" if reps else "",
                      filler_ms_per_call_alone=f"{f_ms:.4f}", median_sm_mhz=median(column(keep, 0)), median_power_w=median(column(keep, 1)))
                print(precision, filler, share, f"{gm:.3f} ms", f"{2.0 * n ** 3 / gm / 1e9:.0f} TFLOP/s",
                      "clock", median(column(keep, 0)), "power", median(column(keep, 1)), "total", round(total_ms),
                      flush=True)
    print("duty done", round(time.time() - START), "s", flush=True)


def measure_bursts(args, meta_row):
    """GEMMs in unbroken bursts of a given length alternating with copies of
    the same length (half the time each): the window the limit acts over."""
    import threading
    t = Table(os.path.join(args.out, "gemm_bursts.csv"),
              ["precision", "burst_ms", "gemms_per_burst", "copies_per_gap", "gemm_ms", "gemm_tflops",
               "first_gemm_of_burst_ms", "last_gemm_of_burst_ms", "median_sm_mhz", "median_power_w"], meta_row)
    n = N
    gemms, src, dst = gemms_and_copy()
    for precision, gemm in gemms.items():
        for burst_ms in (0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2):
            if time.time() - START > args.budget_s:
                print("budget spent", flush=True)
                return
            g_ms = 1.45 if precision == "bf16" else 0.78  # about, unthrottled
            per_burst = max(1, round(burst_ms / g_ms))
            copies = max(1, round(per_burst * g_ms / 0.045))  # a 64 MiB copy takes about 45 us
            samples, stop = [], threading.Event()
            th = threading.Thread(target=sample_smi, args=(stop, samples))
            first, last, every, t0 = [], [], [], time.time()
            th.start()
            while time.time() - t0 < args.seconds:
                marks = []
                for _ in range(max(1, int(40 / (2 * burst_ms)))):
                    evs = events(per_burst + 1)
                    evs[0].record()
                    for i in range(per_burst):
                        gemm()
                        evs[i + 1].record()
                    for _ in range(copies):
                        dst.copy_(src)
                    marks.append(evs)
                torch.cuda.synchronize()
                if time.time() - t0 > args.seconds / 3:
                    for evs in marks:
                        d = [evs[i].elapsed_time(evs[i + 1]) for i in range(per_burst)]
                        first.append(d[0])
                        last.append(d[-1])
                        every.extend(d)
            stop.set()
            th.join()
            keep = [x.split(",") for x in samples[len(samples) // 4:]]
            gm = median(every)
            t.row(precision=precision, burst_ms=burst_ms, gemms_per_burst=per_burst, copies_per_gap=copies,
                  gemm_ms=f"{gm:.4f}", gemm_tflops=f"{2.0 * n ** 3 / gm / 1e9:.1f}",
                  first_gemm_of_burst_ms=f"{median(first):.4f}", last_gemm_of_burst_ms=f"{median(last):.4f}",
                  median_sm_mhz=median(column(keep, 0)), median_power_w=median(column(keep, 1)))
            print(precision, burst_ms, per_burst, f"{gm:.3f} first {median(first):.3f} last {median(last):.3f}",
                  "clock", median(column(keep, 0)), flush=True)
    print("bursts done", round(time.time() - START), "s", flush=True)


def main():
    p = section_parser(__doc__, 200.0, "duty")
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--only-fillers", default="", help="comma-separated: 'copy 64 MiB', 'spin (one SM)'; attention always")
    main_for(__doc__, {"duty": measure, "bursts": measure_bursts}, budget_s=200.0, parser=p)


if __name__ == "__main__":
    sys.exit(main())
