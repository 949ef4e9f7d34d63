#!/usr/bin/env python3
"""The GEMMs and a whole decoder layer of NeMo's dense FP8 runs on one H100.

    python3 calibration/measure/h100_fp8_layer.py --out DIR [--budget-s 420]

NeMo 24.07's DGX-H100 FP8 table runs GPT-3 (LayerNorm, GELU, biases) and
Llama 2 (RMSNorm, SwiGLU, no biases) layers of the same width on Megatron
with Transformer Engine. Two sections:

- `gemm` (DIR/nemo_gemm.csv): every linear of GPT-3 5B, Llama 2 7B and 13B
  at tp 1 (fused QKV, output projection, FC1, FC2) at the tokens of one
  micro-batch of the published runs, forward, input-gradient and
  weight-gradient GEMM, bf16 (torch.mm) and fp8 (torch._scaled_mm: e4m3
  forward, e5m2 output gradient against e4m3, per-tensor scales).
- `layer` (DIR/fp8_layer.csv): the same layers whole, forward + backward,
  Megatron's layout (fused QKV, one FC1 of gate and up for SwiGLU), causal
  attention by SDPA's flash path (FlashAttention-2), in bf16 and in fp8.
  fp8 linears cast their input and output gradient by current per-tensor
  scaling (amax, scale, cast) and keep the weight's fp8 copy and its
  transpose from the first micro-batch (as Transformer Engine does under
  Megatron); the weight-gradient GEMM needs transposed fp8 operands, made
  by copies. Element-wise kernels eager, or the whole layer under
  torch.compile. Transformer Engine does not import on the machine these
  ran on, so its fused cast-transpose kernels are not what runs here: the
  eager rows bound from above what the casts cost, the compiled ones from
  below.

Rows carry the device metadata of h100_kernels.py.
"""
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h100_kernels import FP8, Table, gemm_ms, main_for, over_budget, sdpa_pass_ms, time_calls  # noqa: E402

E5M2 = torch.float8_e5m2

# name: (hidden, ffn, heads, gated (SwiGLU) or not (GELU), biases and
# LayerNorm or not (RMSNorm), micro-batch sequences, sequence length):
# NeMo 24.07 performance summary rows at tp 1.
MODELS = {
    "gpt3-5b": (4096, 16384, 32, False, True, 4, 2048),
    "llama2-7b": (4096, 11008, 32, True, False, 1, 4096),
    "llama2-13b": (5120, 13824, 40, True, False, 1, 4096),
}


def linears(h, ffn, gated):
    return {"qkv": (h, 3 * h), "proj": (h, h), "fc1": (h, (2 if gated else 1) * ffn), "fc2": (ffn, h)}


def fp8_mixed_ms(m, k, n):
    """e5m2 A (an output gradient) against e4m3 B: the input-gradient GEMM."""
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16).to(E5M2)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).to(FP8).t()
    one = torch.ones((), device="cuda", dtype=torch.float32)
    return time_calls(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
                      warmup=3, iters=10)


def measure_gemms(args, meta_row):
    t = Table(os.path.join(args.out, "nemo_gemm.csv"),
              ["kernel", "precision", "model", "linear", "tokens", "pass", "m", "k", "n", "median_ms", "tflops"],
              meta_row)
    for model, (h, ffn, _heads, gated, _ln, mbs, seq) in MODELS.items():
        tokens = mbs * seq
        for linear, (k, n) in linears(h, ffn, gated).items():
            for gpass, m, kk, nn_ in (("fprop", tokens, k, n), ("dgrad", tokens, n, k), ("wgrad", n, tokens, k)):
                for precision in ("bf16", "fp8"):
                    if over_budget(args, "gemms"):
                        return
                    mixed = precision == "fp8" and gpass == "dgrad"
                    kernel = ("cublasLt via torch._scaled_mm (" + ("e5m2 x e4m3" if mixed else "e4m3") +
                              ", per-tensor scale)") if precision == "fp8" else "cublasLt via torch.mm"
                    try:
                        ms = fp8_mixed_ms(m, kk, nn_) if mixed else gemm_ms(m, kk, nn_, precision)
                        t.row(kernel=kernel, precision=precision, model=model, linear=linear, tokens=tokens,
                              **{"pass": gpass}, m=m, k=kk, n=nn_, median_ms=f"{ms:.5f}",
                              tflops=f"{2.0 * m * kk * nn_ / ms / 1e9:.1f}")
                    except Exception as e:  # noqa: BLE001 - recorded
                        t.row(kernel=kernel, precision=precision, model=model, linear=linear, tokens=tokens,
                              **{"pass": gpass}, m=m, k=kk, n=nn_, median_ms="", tflops=f"error: {e}"[:200])
    print("gemms done", round(time.time() - START), "s", flush=True)


START = time.time()


def cast(x, dtype, fmax):
    """Current per-tensor scaling: amax, scale, cast."""
    scale = (fmax / x.abs().amax().float().clamp(min=1e-12))
    return (x.float() * scale).to(dtype), scale.reciprocal()


GRAD = {"dtype": E5M2, "max": 57344.0}


def probe_grad_dtype():
    """e5m2 output gradients where _scaled_mm takes e5m2 x e4m3, else e4m3."""
    try:
        a = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
        one = torch.ones((), device="cuda", dtype=torch.float32)
        torch._scaled_mm(a.to(E5M2), a.to(FP8).t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        torch.cuda.synchronize()
    except Exception:  # noqa: BLE001
        GRAD.update(dtype=FP8, max=448.0)
    return str(GRAD["dtype"]).replace("torch.", "")


class Fp8Matmul(torch.autograd.Function):
    """y = x W^T on fp8 operands; the bf16 weight is an input only so that
    its gradient, the weight-gradient GEMM, is kept (and not pruned by
    torch.compile)."""

    @staticmethod
    def forward(ctx, x, weight, w8, w8t, w_inv):
        x8, x_inv = cast(x, FP8, 448.0)
        ctx.save_for_backward(x8, x_inv, w8t, w_inv)
        return torch._scaled_mm(x8, w8.t(), scale_a=x_inv, scale_b=w_inv, out_dtype=torch.bfloat16)

    @staticmethod
    def backward(ctx, g):
        x8, x_inv, w8t, w_inv = ctx.saved_tensors
        g8, g_inv = cast(g.contiguous(), GRAD["dtype"], GRAD["max"])
        dx = torch._scaled_mm(g8, w8t.t(), scale_a=g_inv, scale_b=w_inv, out_dtype=torch.bfloat16)
        dw = torch._scaled_mm(g8.t().contiguous(), x8.t().contiguous().t(), scale_a=g_inv, scale_b=x_inv,
                              out_dtype=torch.bfloat16)
        return dx, dw, None, None, None


class Linear(nn.Module):
    def __init__(self, k, n, bias, fp8):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n, k) * k ** -0.5)
        self.bias = nn.Parameter(torch.zeros(n)) if bias else None
        self.fp8 = fp8

    def cache_fp8(self):
        w8, w_inv = cast(self.weight.detach(), FP8, 448.0)
        self.w8, self.w8t, self.w_inv = w8, w8.t().contiguous(), w_inv

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        if self.fp8:
            y = Fp8Matmul.apply(x, self.weight, self.w8, self.w8t, self.w_inv)
        else:
            y = x @ self.weight.t()
        if self.bias is not None:
            y = y + self.bias
        return y.view(*shape[:-1], -1)


class MegatronLayer(nn.Module):
    """Pre-norm decoder layer: norm, fused QKV, causal attention (no RoPE
    for GPT-3, RoPE for Llama 2), output projection, residual, norm, FC1
    (GELU, or SwiGLU over one fused gate-and-up FC1), FC2, residual."""

    def __init__(self, h, ffn, heads, gated, layernorm, fp8):
        super().__init__()
        self.heads, self.hd, self.gated = heads, h // heads, gated
        self.n1 = nn.LayerNorm(h) if layernorm else nn.RMSNorm(h, eps=1e-5)
        self.n2 = nn.LayerNorm(h) if layernorm else nn.RMSNorm(h, eps=1e-5)
        for name, (k, n) in linears(h, ffn, gated).items():
            setattr(self, name, Linear(k, n, layernorm, fp8))

    @staticmethod
    def rope(x, cos, sin):
        x1, x2 = x.chunk(2, dim=-1)  # rotate-half, cos and sin over the whole head
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    def forward(self, x, cos, sin):
        b, s, h = x.shape
        qkv = self.qkv(self.n1(x)).view(b, s, self.heads, 3, self.hd)
        q, k, v = qkv.unbind(dim=3)
        if cos is not None:
            q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, h))
        y = self.fc1(self.n2(x))
        if self.gated:
            gate, up = y.chunk(2, dim=-1)
            y = F.silu(gate) * up
        else:
            y = F.gelu(y, approximate="tanh")
        return x + self.fc2(y)


def fwd_bwd_step(layer, fn, x, cos, sin, dy):
    """One forward and backward of fn on x, its gradients cleared after, so
    that no call accumulates into the last one's."""
    def step():
        fn(x, cos, sin).backward(dy)
        x.grad = None
        for p in layer.parameters():
            p.grad = None
    return step


def layer_and_inputs(model, precision, compiled):
    """MODELS[model]'s layer (its fp8 weight copies made), the callable
    (compiled or not), the input, the RoPE tables (None for GPT-3's learned
    positions) and an output gradient."""
    h, ffn, heads, gated, layernorm, mbs, seq = MODELS[model]
    torch.manual_seed(0)
    layer = MegatronLayer(h, ffn, heads, gated, layernorm, precision == "fp8").cuda().to(torch.bfloat16)
    for lin in (layer.qkv, layer.proj, layer.fc1, layer.fc2):
        lin.cache_fp8()
    fn = torch.compile(layer) if compiled else layer
    x = torch.randn(mbs, seq, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    cos = sin = None
    if not layernorm:
        hd = h // heads
        pos = torch.arange(seq, device="cuda", dtype=torch.float32)[:, None]
        freq = 1.0 / (10000.0 ** (torch.arange(0, hd, 2, device="cuda", dtype=torch.float32) / hd))
        ang = torch.cat([pos * freq] * 2, dim=-1)[None, :, None, :]
        cos, sin = ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16)
    dy = torch.randn(mbs, seq, h, device="cuda", dtype=torch.bfloat16)
    return layer, fn, x, cos, sin, dy


def measure_layer(args, meta_row):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    t = Table(os.path.join(args.out, "fp8_layer.csv"),
              ["model", "precision", "mode", "attention", "batch", "seq", "hidden", "ffn", "heads", "fwd_bwd_ms",
               "gemm_tflop", "attention_tflop", "note"], meta_row)
    grad_dtype = probe_grad_dtype()
    # eager first; compiling costs tens of seconds a layer, so the 13B is eager only
    runs = [(model, precision, "eager") for model in MODELS for precision in ("bf16", "fp8")]
    runs += [(model, precision, "compiled") for model in ("llama2-7b", "gpt3-5b") for precision in ("fp8", "bf16")]
    for model, precision, mode in runs:
        h, ffn, heads, gated, layernorm, mbs, seq = MODELS[model]
        if over_budget(args, "layer"):
            return
        note = ""
        try:
            layer, fn, x, cos, sin, dy = layer_and_inputs(model, precision, mode == "compiled")
            step = fwd_bwd_step(layer, fn, x, cos, sin, dy)
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                ms = time_calls(step, warmup=3, iters=10)
            tokens = mbs * seq
            gemm_flop = 6.0 * tokens * sum(k * n for k, n in linears(h, ffn, gated).values())
            attn_flop = 3.5 * 4.0 * mbs * seq * seq * h / 2
            if precision == "fp8":
                note = f"output gradients cast to {grad_dtype}"
            t.row(model=model, precision=precision, mode=mode, attention="flash (FlashAttention-2)", batch=mbs,
                  seq=seq, hidden=h, ffn=ffn, heads=heads, fwd_bwd_ms=f"{ms:.4f}",
                  gemm_tflop=f"{gemm_flop / 1e12:.4f}", attention_tflop=f"{attn_flop / 1e12:.4f}", note=note)
            del layer, fn, x, dy
        except Exception as e:  # noqa: BLE001
            t.row(model=model, precision=precision, mode=mode, attention="flash (FlashAttention-2)", batch=mbs,
                  seq=seq, hidden=h, ffn=ffn, heads=heads, fwd_bwd_ms="", gemm_tflop="", attention_tflop="",
                  note=f"error: {type(e).__name__}: {e}"[:300])
        torch.cuda.empty_cache()
    print("layer done", round(time.time() - START), "s", flush=True)


def measure_attention(args, meta_row):
    """Causal attention at each model's micro-batch (batch, heads, length)."""
    from torch.nn.attention import SDPBackend
    t = Table(os.path.join(args.out, "nemo_attention.csv"),
              ["kernel", "model", "batch", "heads", "head_dim", "seq", "fwd_ms", "bwd_ms", "fwd_tflops", "bwd_tflops",
               "flop_convention"], meta_row)
    for model, (h, _ffn, heads, _gated, _ln, mbs, seq) in MODELS.items():
        for label, backend in (("flash (SDPA FlashAttention-2)", SDPBackend.FLASH_ATTENTION),
                               ("cudnn (SDPA cuDNN fused attention)", SDPBackend.CUDNN_ATTENTION)):
            if over_budget(args, "attention"):
                return
            hd = h // heads
            fwd_flop = 4.0 * mbs * heads * seq * seq * hd / 2
            try:
                f_ms, b_ms = sdpa_pass_ms(backend, mbs, heads, seq, seq, hd, True, 10)
                t.row(kernel=label, model=model, batch=mbs, heads=heads, head_dim=hd, seq=seq, fwd_ms=f"{f_ms:.4f}",
                      bwd_ms=f"{b_ms:.4f}", fwd_tflops=f"{fwd_flop / f_ms / 1e9:.1f}",
                      bwd_tflops=f"{2.5 * fwd_flop / b_ms / 1e9:.1f}",
                      flop_convention="fwd 4*b*h*s^2*d/2 (causal), bwd 2.5x fwd")
            except Exception as e:  # noqa: BLE001
                t.row(kernel=label, model=model, batch=mbs, heads=heads, head_dim=hd, seq=seq, fwd_ms="", bwd_ms="",
                      fwd_tflops=f"error: {e}"[:200], bwd_tflops="", flop_convention="")
    print("attention done", round(time.time() - START), "s", flush=True)


def kernel_class(name):
    n = name.lower()
    if "flash" in n or "fmha" in n:
        return "attention"
    if "gemm" in n or "sm90_xmma" in n or "cutlass" in n or "nvjet" in n:
        return "gemm"
    if "triton" in n:
        return "fused element-wise (Triton)"
    return "other"


def measure_profile(args, meta_row):
    """GPU time of the compiled layers by kernel class (torch.profiler)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.profiler import ProfilerActivity, profile
    t = Table(os.path.join(args.out, "fp8_layer_kernels.csv"),
              ["model", "precision", "mode", "batch", "seq", "calls", "kernel_class", "kernels_per_call",
               "gpu_ms_per_call"], meta_row)
    for model in ("llama2-7b", "gpt3-5b"):
        for precision in ("fp8", "bf16"):
            if over_budget(args, "profile"):
                return
            _h, _ffn, _heads, _gated, _ln, mbs, seq = MODELS[model]
            layer, fn, x, cos, sin, dy = layer_and_inputs(model, precision, True)
            step = fwd_bwd_step(layer, fn, x, cos, sin, dy)
            calls = 5
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                for _ in range(3):
                    step()
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    for _ in range(calls):
                        step()
                    torch.cuda.synchronize()
            sums, counts = {}, {}
            for ev in prof.key_averages():
                if ev.device_type is None or str(ev.device_type) != "DeviceType.CUDA":
                    continue
                c = kernel_class(ev.key)
                sums[c] = sums.get(c, 0.0) + ev.device_time_total / 1000.0
                counts[c] = counts.get(c, 0) + ev.count
            for c in sorted(sums):
                t.row(model=model, precision=precision, mode="compiled", batch=mbs, seq=seq, calls=calls,
                      kernel_class=c, kernels_per_call=counts[c] // calls, gpu_ms_per_call=f"{sums[c] / calls:.4f}")
            kernels = [e for e in prof.key_averages() if str(e.device_type) == "DeviceType.CUDA"]
            for ev in sorted(kernels, key=lambda e: -e.device_time_total)[:14]:
                print(model, precision, f"{ev.device_time_total / 1000 / calls:8.3f} ms", ev.count // calls, ev.key[:90])
            del layer, fn, x, dy
            torch.cuda.empty_cache()
    print("profile done", round(time.time() - START), "s", flush=True)


def main():
    main_for(__doc__, {"gemm": measure_gemms, "attention": measure_attention, "layer": measure_layer,
                       "profile": measure_profile},
             budget_s=420.0)


if __name__ == "__main__":
    sys.exit(main())
