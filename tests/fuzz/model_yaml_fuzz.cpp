// libFuzzer target: the model YAML reader and the input limits.
#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/io/model_loader.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace parplan;
  try {
    const ModelSpec model = parse_model_yaml(fuzz::text_of(data, size), "fuzz.yaml", "fuzz");
    ClusterSpec cluster;
    cluster.device.hbm_bytes = cluster.device.hbm_bytes_per_s = cluster.device.peak_bf16_flops_per_s = 1;
    JobSpec job;
    job.gpus = job.gbs = job.seq = 1;
    check_input_limits(model, cluster, job);
  } catch (const InputError&) {
  }
  return 0;
}
