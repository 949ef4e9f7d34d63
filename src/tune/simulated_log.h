// A Megatron-LM training log as a cluster described by a profile would
// write it (the cost model's step time in Megatron's log-line format), so
// the tuning loop runs and is tested without GPUs.
#pragma once

#include <string>

#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"
#include "src/emit/engine_capabilities.h"

namespace parplan {

/// Megatron's `arguments` block and one iteration line per log_interval
/// iterations; the first window runs slower (warm-up), as real runs do. The
/// arguments say what the log reader needs to cost the run as `job` was
/// costed: the engine (Megatron-DeepSpeed prints `deepspeed`), attention
/// backend, loss kernel and TP overlap.
std::string simulated_megatron_log(const ModelSpec& model, const JobSpec& job, const ParallelConfig& config,
                                   double step_s, int train_iters, int log_interval = 10,
                                   Engine engine = Engine::kMegatron);

/// torchtitan's log of the run: the device-mesh line (the world size) and a
/// metrics line at step 1 and every `log_freq` steps (`step: N  loss: ...
/// memory: ...  tps: T  tflops: F  mfu: M%`, tps the tokens per second per
/// device over the steps since the last line); the first steps run slower
/// (compilation, warm-up), as real runs do. `peak_flops_per_s` (one
/// device's dense bf16 peak) gives the mfu figure, as torchtitan's does.
/// The memory figure is the predicted peak.
std::string simulated_torchtitan_log(const ModelSpec& model, const JobSpec& job, const ParallelConfig& config,
                                     double step_s, int train_iters, double peak_flops_per_s,
                                     double peak_memory_gib, double device_memory_gib, int log_freq = 10);

/// The end of a run that ran out of memory: PyTorch's
/// torch.OutOfMemoryError line (the log readers leave such a run out).
std::string simulated_oom_log(double peak_memory_gib, double device_memory_gib);

}  // namespace parplan
