#include "cost/micro_pipeline_tp.h"

#include "cost/overlap.h"

namespace parplan {

MicroPipelineTpSeconds micro_pipeline_tp_exposed_s(const MicroPipelineTpInputs& in,
                                                   const TpGemmWindows& windows) {
  // The local chunk's matmul runs alone (gather: before the first remote
  // shard lands; scatter: after the last chunk is sent), so a collective
  // hides behind the other tp - 1 chunks.
  const double hiding_share = in.tp > 1 ? (in.tp - 1.0) / in.tp : 0.0;
  const auto fused = [&](double window_s, double extra_pass_s) {
    if (window_s <= 0) return in.collective_s;
    return exposed_after_overlap_s(in.collective_s, hiding_share * window_s, in.compute_slowdown) +
           extra_pass_s;
  };
  MicroPipelineTpSeconds out;
  out.forward_gathers_s =
      fused(windows.attention_in_s, in.shard_copy_s) + fused(windows.ffn_in_s, in.shard_copy_s);
  out.forward_s = out.forward_gathers_s + fused(windows.attention_out_s, in.partial_reduce_s) +
                  fused(windows.ffn_out_s, in.partial_reduce_s);
  out.backward_s = fused(windows.attention_out_dgrad_s, in.shard_copy_s) +
                   fused(windows.ffn_out_dgrad_s, in.shard_copy_s) + 2.0 * in.collective_s;
  return out;
}

}  // namespace parplan
