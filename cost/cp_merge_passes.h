// Memory-bound passes of Transformer Engine's ring context parallelism
// (AttnFuncWithCPAndKVP2P, Megatron-LM's --cp-comm-type p2p) beside the
// per-block attention kernels: packing K and V into the send buffer, merging
// each block's partial output by its log-sum-exp, and accumulating each
// block's dQ and dKV into the rank's gradients.
#pragma once

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
/// cp <= 1: none.
CpMergeBytes te_ring_merge_bytes(int cp, double q_bytes, double o_bytes, double kv_bytes);

}  // namespace parplan
