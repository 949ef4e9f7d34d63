#!/usr/bin/env python3
"""Peak memory of a torchtitan-shaped training step on one H100: what the
runtime keeps beside PyTorch's caching allocator (CUDA context, library
handles), and what the allocator reserves beyond what it hands out.

    python3 calibration/measure/h100_memory_fsdp.py --out DIR [--budget-s 420]

The model is Llama 3 8B cut to 8 layers (2.80 B parameters; hidden 4096,
FFN 14336, 32 heads, 8 KV heads, vocabulary 128256, untied), written as
torchtitan writes it (torchtitan/models/llama3/model/model.py @ v0.2.2:
separate wq/wk/wv and w1/w3 linears, RMSNorm, RoPE, SDPA causal flash
attention) and trained as torchtitan trains it on one GPU: FSDP2
`fully_shard` on every block and on the root over a 1-rank NCCL mesh,
MixedPrecisionPolicy(param bf16, reduce fp32), fp32 parameters, AdamW
(foreach), the loss as torchtitan's eager cross-entropy on fp32-upcast
logits, 8192 tokens per sequence. Each case runs in a process of its own
(clean allocator, its own context): 5 steps, and after each the peak
allocated and reserved bytes of that step (torch.cuda.max_memory_*, reset
before it) and the device's used memory (nvidia-smi) with the cache kept.

Writes DIR/memory_fsdp.csv: case, step, local batch, activation
checkpointing, allocator setting, peak allocated / reserved bytes, device
used bytes, and the used bytes outside the allocator (device used minus
reserved after the step: context, library handles and workspaces, NCCL).
Step 3 of every training case is recorded by phase instead ("3 forward
(logits kept)", "3 loss", ...: the peak since the previous phase, and the
bytes allocated at its end in `note`), and the `after init` row names the
largest live tensors. The `probe` case only initialises CUDA, runs a bf16
GEMM, SDPA's flash and cuDNN attention forward and backward, and a 1-rank
NCCL all-reduce. The `time-` cases time the same loop instead, with fused
AdamW (torchtitan's default): DIR/train_step.csv, the median step of steps
3 to 8 and every step's milliseconds.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

CASES = [
    # name, local batch, activation checkpointing, PYTORCH_CUDA_ALLOC_CONF
    ("probe", 0, "none", ""),
    ("fsdp2-b1-none", 1, "none", ""),
    ("fsdp2-b1-full", 1, "full", ""),
    ("fsdp2-b2-full", 2, "full", ""),
    ("fsdp2-b1-none-expandable", 1, "none", "expandable_segments:True"),
    ("fsdp2-b1-op", 1, "op", ""),
    ("fsdp2-b1-none-compile", 1, "none", ""),
    ("fsdp2-b1-op-compile", 1, "op", ""),
    ("fsdp2-b1-op-nocudnn", 1, "op-nocudnn", ""),
    # Step time (DIR/train_step.csv): fused AdamW as torchtitan's default,
    # 8 steps, the median of steps 3 to 8.
    ("time-b1-none", 1, "none", ""),
    ("time-b1-none-compile", 1, "none", ""),
    ("time-b1-full", 1, "full", ""),
    ("time-b1-op", 1, "op", ""),
    ("time-b1-op-compile", 1, "op", ""),
    ("time-b2-op-compile", 2, "op", ""),
    # Full checkpointing recomputing the whole block (PyTorch's early stop
    # off: torch.utils.checkpoint.set_checkpoint_early_stop(False)).
    ("time-b1-full-noearly", 1, "full-noearly", ""),
]


def used_bytes():
    out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", "0"],
                         capture_output=True, text=True, timeout=20).stdout.strip()
    return int(out.splitlines()[0]) * 1024 * 1024  # MiB


def largest_tensors(torch, count=6):
    """The largest live CUDA tensors (a DTensor's local shard), by bytes."""
    import gc
    seen, sizes = set(), []
    for obj in gc.get_objects():
        try:
            t = obj._local_tensor if hasattr(obj, "_local_tensor") else obj
            if not (torch.is_tensor(t) and t.is_cuda):
                continue
            key = t.untyped_storage().data_ptr()
            if key in seen:
                continue
            seen.add(key)
            sizes.append((t.untyped_storage().nbytes(), tuple(t.shape), str(t.dtype)))
        except Exception:  # noqa: BLE001 - objects that are not tensors
            continue
    sizes.sort(reverse=True)
    return "; ".join(f"{b} {shape} {dtype}" for b, shape, dtype in sizes[:count])


def timed_steps(model, opt, tokens, f, steps=8):
    """Milliseconds of each of `steps` training steps, synchronised."""
    import torch
    import torch.nn.functional as F
    times = []
    for _ in range(steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        logits = model(tokens[:, :-1], f)
        loss = F.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten(0, 1))
        del logits
        loss.backward()
        opt.step()
        opt.zero_grad()
        torch.cuda.synchronize()
        times.append(1000 * (time.perf_counter() - t0))
    return times


def child(name, batch, ac):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch import nn

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    torch.cuda.set_device(0)
    rows = []

    def record(step, extra=None):
        torch.cuda.synchronize()
        used = used_bytes()
        reserved = torch.cuda.memory_reserved()
        rows.append({"case": name, "step": step, "local_batch": batch, "checkpointing": ac,
                     "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
                     "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
                     "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
                     "device_used_bytes": used, "outside_allocator_bytes": used - reserved,
                     "note": extra or ""})

    if name == "probe":
        # set_device above has created the context.
        before = used_bytes()
        torch.zeros(1, device="cuda")
        record("context", f"device used after torch.cuda.set_device (the context), before the first "
                          f"allocation: {before}")
        a = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        w = torch.randn(4096, 14336, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        (a @ w).sum().backward()
        record("gemm")
        q = torch.randn(1, 32, 8192, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        from torch.nn.attention import SDPBackend, sdpa_kernel
        for backend, label in ((SDPBackend.FLASH_ATTENTION, "flash"), (SDPBackend.CUDNN_ATTENTION, "cudnn")):
            try:
                with sdpa_kernel([backend]):
                    F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
                record(label)
            except Exception as e:  # noqa: BLE001 - recorded
                rows.append({"case": name, "step": label, "note": f"failed: {e}"[:200]})
        # Which kernel SDPA picks by default at the training shapes.
        from torch.utils._python_dispatch import TorchDispatchMode

        class Seen(TorchDispatchMode):
            def __init__(self):
                super().__init__()
                self.ops = set()

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                if "scaled_dot_product" in str(func):
                    self.ops.add(str(func))
                return func(*args, **(kwargs or {}))

        with Seen() as seen:
            F.scaled_dot_product_attention(q, q, q, is_causal=True)
        rows.append({"case": name, "step": "default sdpa", "note": " ".join(sorted(seen.ops))})
        dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
        t = torch.ones(1 << 20, device="cuda")
        dist.all_reduce(t)
        record("nccl 1-rank all-reduce")
        dist.destroy_process_group()
        return rows

    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper

    dim, ffn, heads, kv, hd, vocab, layers, seq = 4096, 14336, 32, 8, 128, 128256, 8, 8192

    def rope(seq_len):
        freqs = 1.0 / (500000.0 ** (torch.arange(0, hd, 2, device="cuda").float() / hd))
        t = torch.arange(seq_len, device="cuda").float()
        return torch.polar(torch.ones(seq_len, hd // 2, device="cuda"), torch.outer(t, freqs))

    def apply_rope(x, f):
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(xc * f[None, :, None, :]).flatten(3).type_as(x)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention_norm = nn.RMSNorm(dim, eps=1e-5)
            self.wq = nn.Linear(dim, heads * hd, bias=False)
            self.wk = nn.Linear(dim, kv * hd, bias=False)
            self.wv = nn.Linear(dim, kv * hd, bias=False)
            self.wo = nn.Linear(heads * hd, dim, bias=False)
            self.ffn_norm = nn.RMSNorm(dim, eps=1e-5)
            self.w1 = nn.Linear(dim, ffn, bias=False)
            self.w3 = nn.Linear(dim, ffn, bias=False)
            self.w2 = nn.Linear(ffn, dim, bias=False)

        def forward(self, x, f):
            b, s, _ = x.shape
            h = self.attention_norm(x)
            q = apply_rope(self.wq(h).view(b, s, heads, hd), f)
            k = apply_rope(self.wk(h).view(b, s, kv, hd), f)
            v = self.wv(h).view(b, s, kv, hd)
            k = k.repeat_interleave(heads // kv, dim=2)
            v = v.repeat_interleave(heads // kv, dim=2)
            o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                               is_causal=True)
            x = x + self.wo(o.transpose(1, 2).reshape(b, s, -1))
            h = self.ffn_norm(x)
            return x + self.w2(F.silu(self.w1(h)) * self.w3(h))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_embeddings = nn.Embedding(vocab, dim)
            self.layers = nn.ModuleList([Block() for _ in range(layers)])
            self.norm = nn.RMSNorm(dim, eps=1e-5)
            self.output = nn.Linear(dim, vocab, bias=False)

        def forward(self, tokens, f):
            x = self.tok_embeddings(tokens)
            for layer in self.layers:
                x = layer(x, f)
            return self.output(self.norm(x))

    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
    mesh = init_device_mesh("cuda", (1,))
    with torch.device("cuda"):
        model = Model()
    if ac in ("full", "full-noearly"):
        for i, block in enumerate(model.layers):
            model.layers[i] = checkpoint_wrapper(block, preserve_rng_state=False)
    if ac in ("op", "op-nocudnn"):
        # torchtitan's op-level selective checkpointing (_apply_op_sac):
        # keep the outputs of the listed ops, but only every other mm.
        from collections import defaultdict
        from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts
        # torchtitan v0.2.2's list (models/llama3/infra/parallelize.py), the
        # attention kernels SDPA may pick on an H100 among them.
        keep = {torch.ops.aten.mm.default, torch.ops.aten._scaled_dot_product_flash_attention.default,
                torch.ops.aten._scaled_dot_product_efficient_attention.default,
                torch.ops.aten._scaled_dot_product_cudnn_attention.default}

        def context():
            counts = defaultdict(int)

            def policy(ctx, func, *args, **kwargs):
                key = "recompute" if ctx.is_recompute else "forward"
                if func == torch.ops.aten.mm.default:
                    counts[key] += 1
                save = func in keep and not (func == torch.ops.aten.mm.default and counts[key] % 2 == 0)
                return CheckpointPolicy.MUST_SAVE if save else CheckpointPolicy.PREFER_RECOMPUTE
            return create_selective_checkpoint_contexts(policy)

        if ac == "op-nocudnn":  # the list before cuDNN attention was added to it
            keep.discard(torch.ops.aten._scaled_dot_product_cudnn_attention.default)
        for i, block in enumerate(model.layers):
            model.layers[i] = checkpoint_wrapper(block, context_fn=context, preserve_rng_state=False)
    if name.endswith("-compile"):
        # torchtitan compiles each block after checkpointing, before FSDP.
        for i, block in enumerate(model.layers):
            model.layers[i] = torch.compile(block, fullgraph=True)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for i, block in enumerate(model.layers):
        # torchtitan: the last block is not resharded after the forward.
        fully_shard(block, mesh=mesh, mp_policy=mp, reshard_after_forward=i < layers - 1)
    fully_shard(model, mesh=mesh, mp_policy=mp, reshard_after_forward=True)
    params = sum(p.numel() for p in model.parameters())
    timed = name.startswith("time-")
    if timed:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5, foreach=True)
    f = rope(seq)
    tokens = torch.randint(0, vocab, (batch, seq + 1), device="cuda")
    record("after init", f"parameters {params}; largest tensors {largest_tensors(torch)}")

    def phase(step, label):
        # Allocated now and the peak since the last phase, then reset.
        torch.cuda.synchronize()
        rows.append({"case": name, "step": f"{step} {label}", "local_batch": batch, "checkpointing": ac,
                     "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
                     "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
                     "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
                     "device_used_bytes": "", "outside_allocator_bytes": "",
                     "note": f"allocated now {torch.cuda.memory_allocated()}"})
        torch.cuda.reset_peak_memory_stats()

    if timed:
        import contextlib
        from torch.utils.checkpoint import set_checkpoint_early_stop
        with set_checkpoint_early_stop(False) if ac == "full-noearly" else contextlib.nullcontext():
            times = timed_steps(model, opt, tokens, f)
        steady = sorted(times[2:])
        rows.append({"case": name, "local_batch": batch, "checkpointing": ac,
                     "compiled": name.endswith("-compile"), "step_ms": steady[len(steady) // 2],
                     "steps_ms": " ".join(f"{t:.1f}" for t in times)})
        dist.destroy_process_group()
        return rows
    for step in range(1, 6):
        torch.cuda.reset_peak_memory_stats()
        phased = step == 3
        if phased:
            phase(step, "before forward")
        logits = model(tokens[:, :-1], f)
        if phased:
            phase(step, "forward (logits kept)")
        loss = F.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten(0, 1))
        del logits
        if phased:
            phase(step, "loss")
        loss.backward()
        if phased:
            phase(step, "backward")
        opt.step()
        if phased:
            phase(step, "optimizer step")
        opt.zero_grad()
        if not phased:
            record(step)
    dist.destroy_process_group()
    return rows


def main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        name, batch, ac = sys.argv[2], int(sys.argv[3]), sys.argv[4]
        rows = child(name, batch, ac)
        from h100_kernels import meta  # after the measurement: it queries the device
        print(json.dumps({"meta": meta(), "rows": rows}))
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--budget-s", type=float, default=420.0)
    parser.add_argument("--cases", default=",".join(c[0] for c in CASES),
                        help="comma-separated case names (default: all)")
    args = parser.parse_args()
    # No CUDA in this process: its context would count in the children's
    # device memory. The metadata columns come from each child.
    meta_fields = ["date", "device", "driver", "power_limit", "max_sm_clock", "torch", "cuda", "cudnn"]
    os.makedirs(args.out, exist_ok=True)
    fields = ["case", "step", "local_batch", "checkpointing", "alloc_conf", "peak_allocated_bytes",
              "peak_reserved_bytes", "device_used_bytes", "outside_allocator_bytes", "note"]
    start = time.time()
    time_fields = ["case", "local_batch", "checkpointing", "compiled", "step_ms", "steps_ms"]
    with open(os.path.join(args.out, "memory_fsdp.csv"), "w", newline="") as out, \
            open(os.path.join(args.out, "train_step.csv"), "w", newline="") as timing:
        writer = csv.DictWriter(out, fieldnames=meta_fields + fields)
        writer.writeheader()
        time_writer = csv.DictWriter(timing, fieldnames=meta_fields + time_fields)
        time_writer.writeheader()
        for name, batch, ac, conf in CASES:
            if name not in args.cases.split(","):
                continue
            left = args.budget_s - (time.time() - start)
            if left < 30:
                print(f"budget spent, skipping {name}", file=sys.stderr)
                continue
            env = dict(os.environ)
            env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
            if conf:
                env["PYTORCH_CUDA_ALLOC_CONF"] = conf
            t0 = time.time()
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name, str(batch), ac],
                                  capture_output=True, text=True, env=env, timeout=left)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
            if proc.returncode != 0 or not lines:
                print(f"{name}: rc {proc.returncode}\n{proc.stderr[-2000:]}", file=sys.stderr)
                writer.writerow({"case": name, "note": f"failed rc {proc.returncode}"})
                continue
            result = json.loads(lines[-1])
            if name.startswith("time-"):
                for row in result["rows"]:
                    if row.get("step_ms", "") == "":  # the memory rows before the loop
                        continue
                    time_writer.writerow({**{k: result["meta"].get(k, "") for k in meta_fields},
                                          **{k: row.get(k, "") for k in time_fields}})
                timing.flush()
                print(f"{name}: {time.time() - t0:.1f} s", file=sys.stderr)
                continue
            for row in result["rows"]:
                writer.writerow({**{k: result["meta"].get(k, "") for k in meta_fields},
                                 **{k: row.get(k, "") for k in fields}})
            out.flush()
            print(f"{name}: {time.time() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
