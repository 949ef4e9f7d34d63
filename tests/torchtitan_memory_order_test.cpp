// Orderings of torchtitan's memory a metamorphic audit found reversed: with
// a pipeline, PyTorch's stage code keeps even one micro-batch's gradients
// unsharded until the reduction after the last backward (ZeRO-2 then held
// less than ZeRO-3), and selective recomputation rebuilds only what the
// checkpoint did not keep (it held more than no recomputation).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace torchtitan_memory_order_test {

double peak_bytes(const std::string& args) {
  const nlohmann::json j = test::cli_json("estimate " + args + " --engine torchtitan --format json");
  return j.empty() ? 0.0 : j["memory"]["peak_bytes"].get<double>();
}

TEST(TorchtitanMemoryOrder, Zero3BesideAPipelineNeverHoldsMoreThanZero2) {
  for (const char* batch : {"--gbs 4 --mbs 1", "--gbs 16 --mbs 1"}) {
    const std::string args =
        std::string("--model llama3.1-8b --cluster dgx-h100 --gpus 16 --seq 4096 --tp 2 --sp ") +
        "--pp 2 --recompute selective " + batch;
    const double zero2 = peak_bytes(args + " --zero 2"), zero3 = peak_bytes(args + " --zero 3");
    ASSERT_GT(zero3, 0.0);
    EXPECT_LE(zero3, zero2) << batch;
  }
  // One micro-batch or two: the unsharded gradients are there either way
  // (the peak itself may fall at one: gradients and activations peak at
  // the two ends of its backward).
  const std::string base =
      "estimate --model llama3.1-70b --cluster dgx-a100 --gpus 16 --gbs 4 --seq 2048 --tp 4 --sp --pp 2 "
      "--zero 2 --recompute none --engine torchtitan --format json";
  const nlohmann::json one = test::cli_json(base + " --mbs 2"), two = test::cli_json(base + " --mbs 1");
  ASSERT_FALSE(one.empty());
  ASSERT_FALSE(two.empty());
  EXPECT_EQ(one["memory"]["grads_bytes"], two["memory"]["grads_bytes"]);
}

TEST(TorchtitanMemoryOrder, SelectiveRecomputationNeverHoldsMoreThanNone) {
  const std::string base =
      "--model llama3.1-8b --cluster frontier --gpus 16 --gbs 16 --seq 4096 --tp 8 --sp --pp 2 --mbs 4 "
      "--zero 2";
  const double selective = peak_bytes(base + " --recompute selective");
  ASSERT_GT(selective, 0.0);
  EXPECT_LE(selective, peak_bytes(base + " --recompute none"));
}

}  // namespace torchtitan_memory_order_test
}  // namespace parplan
