// Memory-bound passes of Transformer Engine's ring context parallelism
// (AttnFuncWithCPAndKVP2P, Megatron-LM's --cp-comm-type p2p) beside the
// per-block attention kernels: packing K and V into the send buffer, merging
// each block's partial output by its log-sum-exp, and accumulating each
// block's dQ and dKV into the rank's gradients.
#pragma once

#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"

namespace parplan {

/// Bytes the merge passes read and write on one rank for one layer and one
/// micro-batch, on the rank that moves the most (the ring makes every rank
/// wait on its neighbour each step, so the slowest one sets the pace).
struct CpMergeBytes {
  double forward = 0;
  double backward = 0;
};

/// `q_bytes`: the rank's queries (= dQ), `o_bytes`: its attention output
/// (= dO), `kv_bytes`: its keys plus values (= dK + dV), all 16-bit; causal
/// attention, load-balanced two-chunk layout, bf16 attention (no fp8_dpa).
/// cp <= 1: none. `version`: the main branch's AttnFuncWithCPAndKVP2P, or
/// v1.8's AttnFuncWithCP (transformer_engine/pytorch/attention.py), which
/// adds a zero-filled output and a correction of the first block, copies
/// the half K/V of every lower-triangle block into a contiguous tensor
/// (forward and backward) and concatenates every block's dK and dV.
CpMergeBytes te_ring_merge_bytes(int cp, double q_bytes, double o_bytes, double kv_bytes,
                                 TransformerEngineVersion version = TransformerEngineVersion::kMain);

/// The same for PyTorch's experimental context_parallel as torchtitan runs
/// it (_templated_ring_attention and its backward, load balancing on,
/// convert_to_f32 on): the partial outputs merged by their log-sum-exp into
/// an fp32 running output (_SDPAMerger), dQ and dK/dV accumulated in fp32,
/// the K/V send buffers concatenated. `kv_bytes` is the K plus V the
/// attention kernel takes (kv_elements_per_token). `fused`: the passes
/// compiled (torch.compile: the pointwise operators between two attention
/// kernels make one kernel, the send-buffer copies the all-gather does not
/// read are dropped); otherwise every operator is a kernel (eager).
CpMergeBytes pytorch_ring_merge_bytes(int cp, double q_bytes, double o_bytes, double kv_bytes, bool fused);

/// Keys plus values per token one rank's attention kernel takes under
/// PyTorch's context_parallel in torchtitan, tp-sharded: torchtitan's Llama
/// repeats the KV heads to the query heads before SDPA (repeat_kv), so
/// grouped-query models exchange and merge K and V at the query-head width;
/// MLA's K and V are per head already.
double torchtitan_sdpa_kv_elements_per_token(const ModelSpec& model, int tp);

}  // namespace parplan
