#include "cost/micro_pipeline_tp.h"

#include "cost/overlap.h"

namespace parplan {

MicroPipelineTpSeconds micro_pipeline_tp_exposed_s(const MicroPipelineTpInputs& in,
                                                   const TpGemmWindows& windows) {
  // The local chunk's matmul runs alone (gather: before the first remote
  // shard lands; scatter: after the last chunk is sent), so a collective
  // hides behind the other tp - 1 chunks.
  const double hiding_share = in.tp > 1 ? (in.tp - 1.0) / in.tp : 0.0;
  const auto fused = [&](double collective_s, double window_s, double extra_pass_s) {
    if (window_s <= 0) return collective_s;
    return exposed_after_overlap_s(collective_s, hiding_share * window_s, in.compute_slowdown) + extra_pass_s;
  };
  const auto gather = [&](double window_s) { return fused(in.all_gather_s, window_s, in.shard_copy_s); };
  const auto scatter = [&](double window_s) {
    return fused(in.reduce_scatter_s, window_s, in.partial_reduce_s);
  };
  MicroPipelineTpSeconds out;
  out.forward_gathers_s = gather(windows.attention_in_s) + gather(windows.ffn_in_s);
  out.forward_s = out.forward_gathers_s + scatter(windows.attention_out_s) + scatter(windows.ffn_out_s);
  out.backward_s =
      gather(windows.attention_out_dgrad_s) + gather(windows.ffn_out_dgrad_s) + 2.0 * in.reduce_scatter_s;
  return out;
}

}  // namespace parplan
