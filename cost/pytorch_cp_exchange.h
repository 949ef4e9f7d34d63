// What PyTorch's experimental context_parallel (torchtitan's CP) leaves
// exposed of its K/V all-gather and its dK/dV ring, eager or compiled.
//
// One layer on one rank r at cp = c, load-balanced layout (chunks r and
// 2c-1-r, s_l = s/c tokens), torch/distributed/tensor/experimental/
// _attention.py as of late 2024 (the version with _RotateMethod.
// PRE_ALL_GATHER, read as stored; the same loop as pytorch/pytorch@0123248a,
// _templated_ring_attention and _templated_ring_attention_backward), SDPA's
// flash backend (torchtitan allows FLASH_ATTENTION and EFFICIENT_ATTENTION,
// torchtitan/utils.py get_train_context @ 9dec370; bf16 at head dim 128
// takes flash):
//
// Forward (repeated in the backward under full activation checkpointing):
//   K, V .contiguous() copies; step 0: torch.cat(K, V) into one buffer, one
//   all_gather_into_tensor of it over the c ranks (_AllGatherRotater, the
//   only collective of the forward), then
//   aten._scaled_dot_product_flash_attention(q s_l, kv s_l, is_causal=True);
//   the output cast to fp32 (_SDPAMerger, convert_to_f32).
//   Steps i = 1..c-1: wait for the gather, K/V = chunk (r - i) of it (a
//   view); for i < c-1 a torch.cat of K, V that no collective reads;
//   is_causal=False; i <= r: all s_l queries x the first s_l/2 keys; i > r:
//   the second s_l/2 queries x all s_l keys; the block's out and lse cast
//   to fp32 and merged (sigmoid / logsigmoid), i > r through a torch.cat of
//   the two halves (_partial_update).
// Backward: fp32 zeros for dQ, dK, dV; K/V gathered again the same way;
//   per step one aten._scaled_dot_product_flash_attention_backward at the
//   forward's shapes with the merged out and lse (no forward block is
//   recomputed beyond FlashAttention-2's own score recomputation); from
//   step 1 on, wait for the fp32 dK/dV of rank r-1, add this block's (i <= r
//   into the first half through a torch.cat), torch.cat dK, dV and send it
//   to rank r+1 (_AllToAllRotater: permute_tensor = all_to_all_single with
//   one peer), at every step, c sends; dQ accumulated in fp32 (i > r into
//   the second half through a torch.cat); after the loop, wait for the last
//   dK/dV and cast it to bf16.
//
// Eager, a functional collective returns an AsyncCollectiveTensor that is
// waited on at first use: the gather hides behind the first (causal) block,
// each dK/dV hop behind the next block's backward, the last hop behind
// nothing. Compiled (torchtitan compiles each TransformerBlock with
// fullgraph=True, parallelize_llama.py apply_compile @ 9dec370; Dynamo
// inlines torch.distributed, trace_rules.py MOD_INLINELIST), the ring is
// traced as AOTAutograd desugars the DTensor SDPA, and under tracing
// _maybe_wrap_tensor (torch/distributed/_functional_collectives.py) issues
// wait_tensor right after each collective; Inductor moves a wait only with
// reorder_for_compute_comm_overlap, False by default (torch/_inductor/
// config.py, every 2024-2025 version read), so every gather and every hop
// stalls the compute stream.
#pragma once

namespace parplan {

/// Seconds of CP communication on the critical path for one layer and one
/// micro-batch, forward and backward.
struct PytorchCpExposedSeconds {
  double forward_s = 0;
  double backward_s = 0;
};

/// `gather_s`: one all-gather of every rank's K plus V; `hop_s`: one dK/dV
/// send (fp32) to the next rank; `block_forward_s` / `block_backward_s`:
/// one block's attention kernel, the window each collective can hide in;
/// `compute_slowdown`: what a concurrent collective costs the kernel
/// (exposed_after_overlap_s). `traced`: the ring compiled (torch.compile),
/// every collective waited on as soon as it is issued. cp <= 1: none.
PytorchCpExposedSeconds pytorch_cp_exposed_s(int cp, double gather_s, double hop_s, double block_forward_s,
                                             double block_backward_s, double compute_slowdown, bool traced);

}  // namespace parplan
