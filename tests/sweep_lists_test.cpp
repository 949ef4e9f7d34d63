// parplan sweep: the lists and ranges of --gpus/--gbs, --models expansion,
// and the grid's points.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/plan/sweep.h"

namespace parplan {
namespace {

using Ints = std::vector<int>;

// The message of the InputError that `f` throws, or "" when it throws none.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SweepLists, PlainListIsSortedWithoutRepeats) {
  EXPECT_EQ(parse_int_list("64,128,256", "--gpus"), (Ints{64, 128, 256}));
  EXPECT_EQ(parse_int_list("256, 64 ,128,64", "--gpus"), (Ints{64, 128, 256}));
  EXPECT_EQ(parse_int_list("8", "--gpus"), (Ints{8}));
}

TEST(SweepLists, GeometricRange) {
  EXPECT_EQ(parse_int_list("64:1024:x2", "--gpus"), (Ints{64, 128, 256, 512, 1024}));
  // The stop is included only when reached.
  EXPECT_EQ(parse_int_list("8:1000:x4", "--gpus"), (Ints{8, 32, 128, 512}));
  EXPECT_EQ(parse_int_list("16:16:x2", "--gpus"), (Ints{16}));
}

TEST(SweepLists, ArithmeticRange) {
  EXPECT_EQ(parse_int_list("512:2048:+512", "--gbs"), (Ints{512, 1024, 1536, 2048}));
  EXPECT_EQ(parse_int_list("512:2000:+512", "--gbs"), (Ints{512, 1024, 1536}));
  EXPECT_EQ(parse_int_list("1:5:+1", "--gbs"), (Ints{1, 2, 3, 4, 5}));
}

TEST(SweepLists, ItemsAndRangesMix) {
  EXPECT_EQ(parse_int_list("8,64:256:x2,96", "--gpus"), (Ints{8, 64, 96, 128, 256}));
  EXPECT_EQ(parse_int_list("64:256:x2,128:256:+64", "--gpus"), (Ints{64, 128, 192, 256}));
}

TEST(SweepLists, BadListsNameTheFlag) {
  const std::vector<std::string> bad = {
      "",              // empty list
      "  ",            // blank
      "64,,128",       // empty item
      "64,",           // trailing comma
      "abc",           // not a number
      "64,1e3",        // not an integer
      "12.5",          // not an integer
      "0",             // zero
      "-8",            // negative
      "+8",            // sign
      "99999999999",   // beyond int
      "1024:64:x2",    // yields nothing
      "64:1024",       // no step
      "64:1024:2",     // step without x or +
      "64:1024:x1",    // factor 1 never ends
      "64:1024:x0",    // factor 0
      "64:1024:+0",    // step 0
      "64:1024:+",     // step missing
      "0:64:x2",       // start 0
      "64:1024:x2:4",  // too many parts
      "1:100000:+1",   // more than 4096 values
  };
  for (const std::string& text : bad) {
    const std::string message = error_of([&] { parse_int_list(text, "--gbs"); });
    EXPECT_EQ(message.rfind("--gbs", 0), 0u) << "'" << text << "' -> '" << message << "'";
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(SweepLists, RangeYieldingNothingSaysSo) {
  EXPECT_NE(error_of([] { parse_int_list("2048:512:+512", "--gbs"); }).find("yields nothing"),
            std::string::npos);
}

TEST(SweepModels, LadderExpandsToTheNarayananFamily) {
  const std::vector<std::string> names = expand_model_names("ladder:narayanan", "--models");
  ASSERT_EQ(names.size(), 10u);  // Narayanan et al. 2021, Table 1: ten models
  EXPECT_EQ(names.front(), "gpt-1.7b");
  EXPECT_EQ(names.back(), "gpt-1t");
  // Every ladder entry is in the catalog.
  for (const auto& [ladder, models] : model_ladders()) {
    const std::vector<ModelSpec> loaded = load_sweep_models("ladder:" + ladder, "--models");
    EXPECT_EQ(loaded.size(), models.size()) << ladder;
  }
}

TEST(SweepModels, NamesKeepOrderAndDropRepeats) {
  EXPECT_EQ(expand_model_names("llama3-8b, gpt-1.7b,llama3-8b", "--models"),
            (std::vector<std::string>{"llama3-8b", "gpt-1.7b"}));
  EXPECT_EQ(expand_model_names("gpt-1t,ladder:llama3", "--models"),
            (std::vector<std::string>{"gpt-1t", "llama3-8b", "llama3-70b", "llama3-405b"}));
}

TEST(SweepModels, BadModelsNameTheFlag) {
  for (const std::string& text :
       {std::string(""), std::string("gpt-1.7b,,llama3-8b"), std::string("ladder:nope"),
        std::string("no-such-model"), std::string("/no/such/model.yaml")}) {
    const std::string message = error_of([&] { load_sweep_models(text, "--models"); });
    EXPECT_EQ(message.rfind("--models", 0), 0u) << "'" << text << "' -> '" << message << "'";
  }
}

SweepGrid small_grid() {
  SweepGrid grid;
  grid.models = load_sweep_models("gpt-1.7b,llama3-8b", "--models");
  grid.cluster = load_cluster("dgx-a100");
  grid.gpus = {8, 16, 32};
  grid.gbs = {64, 128};
  grid.seq = 2048;
  return grid;
}

TEST(SweepPoints, ModelMajorThenGpusThenBatch) {
  const std::vector<SweepPoint> points = sweep_points(small_grid());
  ASSERT_EQ(points.size(), 2u * 3u * 2u);
  for (std::size_t i = 0; i < points.size(); ++i) EXPECT_EQ(points[i].index, static_cast<int>(i));
  EXPECT_EQ(points[0].model_index, 0);
  EXPECT_EQ(points[0].job.gpus, 8);
  EXPECT_EQ(points[0].job.gbs, 64);
  EXPECT_EQ(points[1].job.gbs, 128);
  EXPECT_EQ(points[2].job.gpus, 16);
  EXPECT_EQ(points[6].model_index, 1);
  EXPECT_EQ(points[11].job.gpus, 32);
  EXPECT_EQ(points[11].job.seq, 2048);
}

TEST(SweepPoints, GpusBeyondTheClusterIsBadInput) {
  SweepGrid grid = small_grid();
  grid.gpus = {8, 8192};  // dgx-a100 (Selene) has 4480 GPUs
  EXPECT_EQ(error_of([&] { sweep_points(grid); }).rfind("--gpus 8192", 0), 0u);
}

TEST(SweepPoints, SequenceBeyondLearnedPositionsIsBadInput) {
  SweepGrid grid = small_grid();
  grid.seq = 4096;  // gpt-1.7b has 2048 learned positions
  EXPECT_EQ(error_of([&] { sweep_points(grid); }).rfind("--seq 4096", 0), 0u);
}

TEST(SweepEvaluate, EveryPointHasAnOutcomeInRowOrder) {
  SweepGrid grid = small_grid();
  grid.models.push_back(load_sweep_models("gpt-1t", "--models").front());
  const std::vector<SweepPoint> points = sweep_points(grid);
  std::atomic<int> calls{0};
  const std::vector<SweepOutcome> outcomes =
      evaluate_sweep(grid, points, PlannerOptions{}, [&](int done, int total) {
        EXPECT_LE(done, total);
        ++calls;
      });
  ASSERT_EQ(outcomes.size(), points.size());
  EXPECT_EQ(calls.load(), static_cast<int>(points.size()));
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    EXPECT_EQ(outcomes[i].point.index, static_cast<int>(i));
    EXPECT_GT(outcomes[i].params, 0);
    if (outcomes[i].feasible) {
      EXPECT_EQ(outcomes[i].config.world(), outcomes[i].point.job.gpus);
      EXPECT_TRUE(outcomes[i].cost.memory.fits);
      EXPECT_TRUE(outcomes[i].reason.empty());
    } else {
      EXPECT_FALSE(outcomes[i].reason.empty());
    }
  }
  // A trillion parameters with Adam need 16 bytes each = 16 TB of model state
  // (Rajbhandari et al. 2020): more than 32 x 80 GB, so no plan on <= 32 GPUs.
  for (std::size_t i = 12; i < outcomes.size(); ++i) EXPECT_FALSE(outcomes[i].feasible) << i;
  // 1.7 B parameters at 16 bytes = 27 GB fits on 8 GPUs of 80 GB.
  EXPECT_TRUE(outcomes[0].feasible);
}

}  // namespace
}  // namespace parplan
