#include "cost/sequence_dim_copies.h"

#include "cost/compute_time.h"

namespace parplan {

SequenceDimCopySeconds sequence_dim_copy_s(const DeviceSpec& device, const SequenceDimCopyShape& shape) {
  SequenceDimCopySeconds t;
  if (shape.tp <= 1) return t;
  // A copy reads and writes its bytes once.
  const auto copy_s = [&](double bytes) { return memory_bound_s(device, 2.0 * bytes); };
  const double scatter_copy_s = copy_s(shape.scatter_bytes);
  const double backward_scatters_s = (shape.attention_backward_fused ? 0.0 : scatter_copy_s) +
                                     (shape.ffn_backward_fused ? 0.0 : scatter_copy_s);
  const double gather_copy_s = copy_s(shape.gather_bytes);
  if (shape.micro_pipelined) {
    // The fused collectives' operands are restrided by their producers; the
    // gathered operand comes out sequence-major and is copied batch-major
    // once for its weight gradient.
    t.backward_s = 2.0 * gather_copy_s + backward_scatters_s;
    return t;
  }
  t.forward_gathers_s = 2.0 * gather_copy_s;
  t.forward_s = t.forward_gathers_s + 2.0 * scatter_copy_s;
  t.backward_s = 2.0 * gather_copy_s + backward_scatters_s;
  return t;
}

}  // namespace parplan
