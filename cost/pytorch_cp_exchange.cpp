#include "cost/pytorch_cp_exchange.h"

#include "cost/overlap.h"

namespace parplan {

PytorchCpExposedSeconds pytorch_cp_exposed_s(int cp, double gather_s, double hop_s, double block_forward_s,
                                             double block_backward_s, double compute_slowdown, bool traced) {
  PytorchCpExposedSeconds t;
  if (cp <= 1) return t;
  // The backward loop sends its accumulated dK/dV at every one of its cp
  // steps (dkv_rotater.exchange_buffers after each block).
  if (traced) {
    t.forward_s = gather_s;
    t.backward_s = gather_s + cp * hop_s;
    return t;
  }
  t.forward_s = exposed_after_overlap_s(gather_s, block_forward_s, compute_slowdown);
  t.backward_s = exposed_after_overlap_s(gather_s, block_backward_s, compute_slowdown) +
                 (cp - 1) * exposed_after_overlap_s(hop_s, block_backward_s, compute_slowdown) + hop_s;
  return t;
}

}  // namespace parplan
