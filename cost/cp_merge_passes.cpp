#include "cost/cp_merge_passes.h"

#include <algorithm>
#include <array>
#include <vector>

namespace parplan {

// Every count below is one pass of the named line in
// transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py
// at NVIDIA/TransformerEngine@d0067d0da6cb01811b8072a7d304f0e00344ce2b, in
// tensor sizes read plus written. Causal sbhd/bshd: each rank holds chunks r
// and 2cp-1-r; step i attends the KV of rank r - i (forward), so step 0 is the
// rank's own causal block, steps i <= r take the first half of the received
// KV ("lower-triangle", full Q), steps i > r the second half of Q
// ("upper-triangle", full KV). The softmax statistics (fp32, one per head and
// token: 1/64 of the output at head dim 128) are left out.
//
// Transformer Engine v1.8 (transformer_engine/pytorch/attention.py,
// AttnFuncWithCP, at tag v1.8 = NVIDIA/TransformerEngine@3ec998e9) differs
// in the passes counted under `v18` below. The NeMo 24.07 container ships
// 1.8.0.dev0, a main build between the release_v1.7 and release_v1.8
// branch points (67bc399d, 16c82574; the latter's version.txt reads
// 1.8.0.dev0); these passes are the same at both and at the tag. Megatron
// hands AttnFuncWithCP sbhd tensors made contiguous (FusedAttention.forward),
// so q[1], out[1] and dout[1] of the [2, s/2, b, h, d] view are contiguous
// and their .contiguous() copies nothing, while the KV buffer is
// [2, 2, s/2, b, h, d] (K and V stacked, then the two chunks) and kv[:, 0]
// is strided.
namespace {
// Passes of one rank, in tensor sizes: bytes = passes x the tensor's bytes.
struct RankPasses {
  double fwd_kv = 0, fwd_o = 0, bwd_kv = 0, bwd_q = 0;
};

std::vector<RankPasses> te_rank_passes(int cp, bool v18) {
  std::vector<RankPasses> ranks;
  for (int r = 0; r < cp; ++r) {
    // Forward. torch.cat((k.view(-1), v.view(-1))) into the first send
    // buffer (l. 1690): read K, V, write them.
    double fwd_kv = 2.0;
    // flash_attn_fwd_out_correction_init on step 0 (one compiled kernel,
    // jit_fuser = torch.compile): read the step's output, write `out`.
    double fwd_o = 2.0;
    // flash_attn_fwd_out_correction, out.add_(out_step * exp(lse_step - lse)):
    // read out and the step's output, write out; the second-half variant
    // (steps i > r) touches half of each.
    for (int i = 1; i < cp; ++i) fwd_o += i <= r ? 3.0 : 1.5;
    if (v18) {
      // v1.8: torch.cat((k.unsqueeze(0), v.unsqueeze(0))) packs the same 2 KV;
      // steps 1 <= i <= r take kv_inputs[:, 0, ...].contiguous() (read and
      // write half K and V: 1 KV). out = torch.empty_like(q).zero_() (write
      // 1 O), then flash_attn_fwd_out_correction (torch.compile) for every
      // step including step 0: read out and the step's output, write out
      // (3 O) in place of main's initialising pass (2 O).
      fwd_kv += r;
      fwd_o += 1.0 + 1.0;
    }

    // Backward: the reversed ring starts from the forward's last KV
    // (kv = p2p_comm_buffers[-1], l. 2087), copied into the send buffer
    // (p2p_comm_buffers[0][0].copy_(kv)): read and write KV.
    double bwd_kv = 2.0;
    double bwd_q = 0;
    for (int i = 0; i < cp; ++i) {
      // dq accumulation (l. 2650-2698): add_ reads dq and dq_, writes dq (3);
      // copy_ reads dq_, writes dq (2); "[1]" slices are half the tensor.
      if (i > cp - r - 1)
        bwd_q += 3.0;
      else if (i == cp - r - 1)
        bwd_q += r == cp - 1 ? 2.0 : 1.0 + 1.5;  // dq[0].copy_ + dq[1].add_
      else
        bwd_q += i > 0 ? 1.5 : 1.0;  // dq[1].add_ / dq[1].copy_
      // dk, dv accumulation into the received dKV buffer (l. 2721-2810).
      if (i == cp - 1)
        bwd_kv += r == 0 ? 1.5 + 1.0 : 3.0;  // diagonal block, full dk_
      else if (i >= cp - r - 1)
        bwd_kv += i == 0 && r == cp - 1 ? 1.0 : 1.5;  // half dk_ into dk[0]
      else
        bwd_kv += i > 0 ? 3.0 : 2.0;  // full dk_: add_ / copy_
      if (v18) {
        // v1.8: dkv_ = torch.cat((dk_.unsqueeze(0), dv_.unsqueeze(0))) every
        // step (read and write the block's dK, dV: 2 KV, 1 for the half-KV
        // lower-triangle blocks cp - r - 1 <= i < cp - 1), whose K/V input
        // is kv[:, 0, ...].contiguous() (1 KV more).
        const bool lower = i >= cp - r - 1 && i != cp - 1;
        bwd_kv += lower ? 1.0 + 1.0 : 2.0;
      }
    }
    ranks.push_back({fwd_kv, fwd_o, bwd_kv, bwd_q});
  }
  return ranks;
}

// The pass counts depend on cp (and the variant) alone, but take O(cp^2) to
// count: the search asks for them per candidate, so counts up to
// kCachedRanks ranks are counted once (a thread-safe static).
constexpr int kCachedRanks = 64;

template <class Count>
const std::vector<RankPasses>& cached_passes(int cp, int variant, Count count) {
  static const auto table = [&] {
    std::array<std::array<std::vector<RankPasses>, kCachedRanks + 1>, 2> t;
    for (int v = 0; v < 2; ++v)
      for (int n = 2; n <= kCachedRanks; ++n) t[v][n] = count(n, v == 1);
    return t;
  }();
  return table[variant][cp];
}

CpMergeBytes slowest_rank(const std::vector<RankPasses>& ranks, double q_bytes, double o_bytes,
                          double kv_bytes) {
  CpMergeBytes slowest;
  for (const RankPasses& p : ranks) {
    const CpMergeBytes rank{p.fwd_kv * kv_bytes + p.fwd_o * o_bytes, p.bwd_kv * kv_bytes + p.bwd_q * q_bytes};
    if (rank.forward + rank.backward > slowest.forward + slowest.backward) slowest = rank;
  }
  return slowest;
}
}  // namespace

CpMergeBytes te_ring_merge_bytes(int cp, double q_bytes, double o_bytes, double kv_bytes,
                                 TransformerEngineVersion version) {
  if (cp <= 1) return {};
  const bool v18 = version == TransformerEngineVersion::kV1_8;
  if (cp > kCachedRanks) return slowest_rank(te_rank_passes(cp, v18), q_bytes, o_bytes, kv_bytes);
  static constexpr auto count = [](int n, bool v) { return te_rank_passes(n, v); };
  return slowest_rank(cached_passes(cp, v18 ? 1 : 0, count), q_bytes, o_bytes, kv_bytes);
}

// PyTorch's context_parallel: torch/distributed/tensor/experimental/_attention.py
// as stored at pytorch/pytorch@0123248a484ffe531edb5098b986c1bac08cd296
// (_SDPAMerger, _templated_ring_attention, _templated_ring_attention_backward;
// the run's torch 1963fc8 of 2024-12-23 is taken to match). Counts are in
// 16-bit tensor sizes read plus written: an fp32 read or write of the same
// tensor counts 2. The layout and the branches are TE's (see above): rank r
// takes step i <= r with all its queries and half the KV ("partial" false),
// i > r with the second half of its queries ("partial" true, half the
// output). Softmax statistics (one fp32 per head and token) are left out.
namespace {
std::vector<RankPasses> pytorch_rank_passes(int cp, bool fused) {
  std::vector<RankPasses> ranks;
  for (int r = 0; r < cp; ++r) {
    double fwd_kv = 0, fwd_o = 0, bwd_kv = 0, bwd_q = 0;
    // key.contiguous(), value.contiguous(): the attention module hands SDPA
    // transposed views, so eager copies K and V (read, write) in both
    // passes; compiled, the copy is the layout the repeat_kv kernel writes.
    if (!fused) fwd_kv += 2.0, bwd_kv += 2.0;
    // torch.cat([key.flatten(), value.flatten()]) for every step but the
    // last, in both passes; the all-gather rotater reads only the first
    // (exchange_buffers gathers once), so compiled code keeps one.
    const double cats = fused ? 1.0 : cp - 1.0;
    fwd_kv += 2.0 * cats;
    bwd_kv += 2.0 * cats;

    // Forward merge, _SDPAMerger.step per block. Eager: out.to(float32)
    // (read 1, write 2) per block; from the second block, out - block_out
    // (2 + 2 + 2), times sigmoid(lse difference) (2 + 2), subtracted from out
    // (2 + 2 + 2) on the merged part; a partial block's _partial_update
    // concatenates both halves into a new fp32 output (read 2, write 2); the
    // result cast down to bf16 (2 + 1). Compiled: one kernel per block reads
    // the running output (the first block's bf16 output, its cast inlined:
    // 1; then fp32: 2) and the block's output (1) and writes the running
    // output (2; the last block writes the bf16 result: 1); a partial
    // block's kernel copies the untouched half the same way.
    if (!fused) fwd_o += 3.0 + 3.0;  // first block's cast up, result's cast down
    for (int i = 1; i < cp; ++i) {
      const bool partial = i > r;
      const double part = partial ? 0.5 : 1.0;
      if (fused) {
        const double read = i == 1 ? 1.0 : 2.0;
        const double write = i == cp - 1 ? 1.0 : 2.0;
        fwd_o += part * (read + 1.0 + write) + (partial ? 0.5 * (read + write) : 0.0);
      } else {
        fwd_o += part * (3.0 + 16.0) + (partial ? 4.0 : 0.0);
      }
    }

    // Backward. Eager: fp32 zeros for dQ, dK, dV (write 2 each); each block's
    // bf16 dK/dV added into the fp32 accumulators (read 2 + 1, write 2); a
    // block of half the KV (1 <= i <= r) adds into the first half of the
    // received dK/dV and _partial_update concatenates (read 2, write 2); the
    // fp32 send buffer torch.cat([grad_key..., grad_value...]) every step
    // (read 2, write 2); dQ likewise, second half for i > r; at the end dQ
    // and the received dK/dV cast down (2 + 1). Compiled: the zeros and the
    // concatenations fold into one kernel per block reading the received
    // fp32 dK/dV (2) and the block's gradient (1), writing the send buffer
    // (2), and copying an untouched half; the dQ kernel the same, the last
    // one writing bf16. The received dK/dV's final cast down
    // (next_grad_kv.to(key.dtype)) stays a kernel either way.
    bwd_kv += 3.0;
    if (!fused) bwd_q += 2.0 + 3.0, bwd_kv += 2.0;
    for (int i = 0; i < cp; ++i) {
      const bool half_kv = i >= 1 && i <= r;
      const bool half_q = i > r;
      if (fused) {
        const double read_acc = i == 0 ? 0.0 : 2.0;  // the zeros, inlined
        bwd_kv += half_kv ? 0.5 * (read_acc + 1.0 + 2.0) + 0.5 * (read_acc + 2.0) : read_acc + 1.0 + 2.0;
        const double write_q = i == cp - 1 ? 1.0 : 2.0;
        bwd_q +=
            half_q ? 0.5 * (read_acc + 1.0 + write_q) + 0.5 * (read_acc + write_q) : read_acc + 1.0 + write_q;
      } else {
        bwd_kv += (half_kv ? 0.5 * 5.0 + 4.0 : 5.0) + 4.0;
        bwd_q += half_q ? 0.5 * 5.0 + 4.0 : 5.0;
      }
    }
    ranks.push_back({fwd_kv, fwd_o, bwd_kv, bwd_q});
  }
  return ranks;
}
}  // namespace

CpMergeBytes pytorch_ring_merge_bytes(int cp, double q_bytes, double o_bytes, double kv_bytes, bool fused) {
  if (cp <= 1) return {};
  if (cp > kCachedRanks) return slowest_rank(pytorch_rank_passes(cp, fused), q_bytes, o_bytes, kv_bytes);
  static constexpr auto count = [](int n, bool f) { return pytorch_rank_passes(n, f); };
  return slowest_rank(cached_passes(cp, fused ? 1 : 0, count), q_bytes, o_bytes, kv_bytes);
}

double torchtitan_sdpa_kv_elements_per_token(const ModelSpec& model, int tp) {
  // torchtitan/models/llama/model.py, Attention.forward: keys =
  // repeat_kv(xk, self.n_rep), values likewise, then
  // F.scaled_dot_product_attention (read at pytorch/torchtitan@0199cbc1;
  // the run's torchtitan 9dec370 is taken to match).
  if (model.uses_mla()) return model.heads * static_cast<double>(model.head_dim + model.v_head_dim) / tp;
  return 2.0 * model.heads * static_cast<double>(model.head_dim) / tp;
}

}  // namespace parplan
