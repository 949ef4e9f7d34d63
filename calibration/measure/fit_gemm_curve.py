#!/usr/bin/env python3
"""Fits the H100 profiles' GEMM curve to calibration/h100-kernels/gemm.csv.

    python3 calibration/measure/fit_gemm_curve.py [calibration/h100-kernels/gemm.csv]

Prints gemm_efficiency_max, gemm_half_dim and gemm_half_gflop (bf16 rows),
then fp8_gemm_ratio_max, fp8_gemm_half_dim and fp8_gemm_bf16_half_dim (fp8
rows against that bf16 curve, keyed on the reduction length K), each fit
minimising the mean relative error in time over the rows of 30 us or more
(shorter ones are bound by the host's dispatch). The model is parplan's
gemm_time_s (cost/compute_time.cpp): time = max(FLOPs / (peak x eff),
2-byte traffic / (HBM x memory-bound efficiency)), eff = e_max x d / (d +
half_dim) x W / (W + half_flops), d the smallest dimension, W the FLOPs; in
fp8 eff x ratio_max x (K + bf16_half) / (K + half), at most 1. Plain
Python: no packages needed.
"""
import csv
import sys

PEAK = {"bf16": 989.4e12, "fp8": 1978.9e12}  # H100 SXM5 datasheet, dense
HBM_S = 3.35e12 * 0.875  # datasheet x the profiles' measured memory-bound efficiency


def gemm_s(bf16, fp8, m, n, k, precision):
    e_max, half_dim, half_gflop = bf16
    flops = 2.0 * m * n * k
    d = min(m, n, k)
    eff = e_max * d / (d + half_dim) * flops / (flops + half_gflop * 1e9)
    if precision == "fp8":
        ratio_max, half, bf16_half = fp8
        eff = min(1.0, eff * ratio_max * (k + bf16_half) / (k + half))
    return max(flops / (PEAK[precision] * eff), 2.0 * (m * k + k * n + m * n) / HBM_S)


def errors(rows, bf16, fp8=None):
    out = []
    for r in rows:
        measured = float(r["median_ms"]) / 1e3
        modelled = gemm_s(bf16, fp8, float(r["m"]), float(r["n"]), float(r["k"]), r["precision"])
        out.append(abs(modelled - measured) / measured)
    return sum(out) / len(out), max(out)


def descend(objective, x, steps, rounds=80):
    """Coordinate descent with halving steps (the objective is not smooth)."""
    best = objective(x)
    for _ in range(rounds):
        moved = False
        for i, step in enumerate(steps):
            for delta in (step, -step):
                y = list(x)
                y[i] = max(0.0, y[i] + delta)
                value = objective(y)
                if value < best:
                    best, x, moved = value, y, True
        if not moved:
            steps = [s / 2 for s in steps]
    return x, best


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "calibration/h100-kernels/gemm.csv"
    rows = [r for r in csv.DictReader(open(path)) if r["median_ms"] and float(r["median_ms"]) >= 0.03]
    bf16_rows = [r for r in rows if r["precision"] == "bf16"]
    fp8_rows = [r for r in rows if r["precision"] == "fp8"]
    start = min(((e / 1000, hd, hg) for e in range(600, 800, 10) for hd in (0, 10, 40, 82, 160)
                 for hg in (0.09, 0.5, 1, 2, 4, 8)), key=lambda p: errors(bf16_rows, p)[0])
    bf16, _ = descend(lambda p: errors(bf16_rows, p)[0], list(start), [0.01, 10, 0.5])
    mean, worst = errors(bf16_rows, bf16)
    print(f"bf16 ({len(bf16_rows)} rows): gemm_efficiency_max {bf16[0]:.4f} gemm_half_dim {bf16[1]:.1f} "
          f"gemm_half_gflop {bf16[2]:.2f}: mean error {100 * mean:.1f} %, max {100 * worst:.1f} %")
    fp8, _ = descend(lambda p: errors(fp8_rows, bf16, p)[0], [0.9, 400.0, 267.0], [0.02, 50, 50])
    mean, worst = errors(fp8_rows, bf16, fp8)
    print(f"fp8 ({len(fp8_rows)} rows): fp8_gemm_ratio_max {fp8[0]:.3f} fp8_gemm_half_dim {fp8[1]:.0f} "
          f"fp8_gemm_bf16_half_dim {fp8[2]:.0f}: mean error {100 * mean:.1f} %, max {100 * worst:.1f} %")


if __name__ == "__main__":
    main()
