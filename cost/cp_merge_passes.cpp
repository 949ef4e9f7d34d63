#include "cost/cp_merge_passes.h"

#include <algorithm>

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
CpMergeBytes te_ring_merge_bytes(int cp, double q_bytes, double o_bytes, double kv_bytes) {
  if (cp <= 1) return {};
  CpMergeBytes slowest;
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
    }
    const CpMergeBytes rank{fwd_kv * kv_bytes + fwd_o * o_bytes, bwd_kv * kv_bytes + bwd_q * q_bytes};
    if (rank.forward + rank.backward > slowest.forward + slowest.backward) slowest = rank;
  }
  return slowest;
}

}  // namespace parplan
