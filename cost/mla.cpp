#include "cost/mla.h"

#include "cost/compute_time.h"

namespace parplan {

namespace {
double nope_dim(const ModelSpec& m) { return m.head_dim - m.qk_rope_head_dim; }
}  // namespace

double mla_projection_s(const ModelSpec& m, const DeviceSpec& device, double peak, double tokens, int tp) {
  const double h = m.hidden;
  const double heads = static_cast<double>(m.heads) / tp;
  const double kv_down = m.kv_lora_rank + m.qk_rope_head_dim;
  double time_s = gemm_time_s(device, peak, tokens, kv_down, h);
  time_s += gemm_time_s(device, peak, tokens, heads * (nope_dim(m) + m.v_head_dim), m.kv_lora_rank);
  if (m.q_lora_rank > 0) {
    time_s += gemm_time_s(device, peak, tokens, m.q_lora_rank, h);
    time_s += gemm_time_s(device, peak, tokens, heads * m.head_dim, m.q_lora_rank);
  } else {
    time_s += gemm_time_s(device, peak, tokens, heads * m.head_dim, h);
  }
  return time_s + gemm_time_s(device, peak, tokens, h, heads * m.v_head_dim);
}

double mla_up_projection_s(const ModelSpec& m, const DeviceSpec& device, double peak, double tokens, int tp) {
  const double heads = static_cast<double>(m.heads) / tp;
  double time_s = gemm_time_s(device, peak, tokens, heads * (nope_dim(m) + m.v_head_dim), m.kv_lora_rank);
  if (m.q_lora_rank > 0) time_s += gemm_time_s(device, peak, tokens, heads * m.head_dim, m.q_lora_rank);
  return time_s;
}

double mla_projection_flops(const ModelSpec& m, double tokens) {
  const double h = m.hidden;
  const double a = m.heads;
  const double q =
      m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank * a * m.head_dim : h * a * m.head_dim;
  const double kv =
      h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank * a * (nope_dim(m) + m.v_head_dim);
  return 2.0 * tokens * (q + kv + a * m.v_head_dim * h);
}

}  // namespace parplan
