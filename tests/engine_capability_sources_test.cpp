// The capability tables cite their engines: every table names a commit (a
// release tag or a short hash) and every row cites `path:line` or
// `path:first-last` in that engine's source; and the rows corrected on
// re-reading those lines hold in capability_problem().
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "src/emit/engine_capabilities.h"

namespace parplan {
namespace {

constexpr Engine kEngines[] = {Engine::kMegatron, Engine::kDeepSpeed, Engine::kMegatronDeepSpeed,
                               Engine::kTorchtitan};

TEST(EngineCapabilitySources, EveryTableNamesACommit) {
  // A release tag (v0.17.0) or a git short hash (at least 7 hex digits).
  const std::regex commit(R"((^|\s)(v\d+\.\d+\.\d+|at [0-9a-f]{7,40})($|\s))");
  for (Engine e : kEngines) {
    const EngineCapabilities& caps = engine_capabilities(e);
    ASSERT_NE(caps.revision, nullptr);
    EXPECT_TRUE(std::regex_search(caps.revision, commit)) << caps.name << ": '" << caps.revision << "'";
    // Printed inside messages ("megatron: no fp16 (REVISION)"): one short line.
    EXPECT_LT(std::string(caps.revision).size(), 48u) << caps.name;
  }
}

TEST(EngineCapabilitySources, EverySourceCitesAFileAndLine) {
  // path/to/file.ext:LINE, optionally -LAST and more ",LINE[-LAST]".
  const std::regex cite(R"(([A-Za-z0-9_.-]+/)*[A-Za-z0-9_.-]+\.[a-z]+:(\d+)(-(\d+))?((,\d+(-\d+)?)*))");
  const std::regex range(R"((\d+)-(\d+))");
  for (Engine e : kEngines) {
    const EngineCapabilities& caps = engine_capabilities(e);
    ASSERT_FALSE(caps.sources.empty()) << caps.name;
    for (const CapabilitySource& row : caps.sources) {
      ASSERT_NE(row.feature, nullptr);
      ASSERT_NE(row.value, nullptr);
      ASSERT_NE(row.source, nullptr);
      EXPECT_FALSE(std::string(row.feature).empty()) << caps.name;
      EXPECT_FALSE(std::string(row.value).empty()) << caps.name << " " << row.feature;
      const std::string source = row.source;
      std::smatch m;
      EXPECT_TRUE(std::regex_search(source, m, cite))
          << caps.name << " " << row.feature << ": '" << source << "'";
      // Line numbers start at 1 and ranges run forwards.
      for (auto it = std::sregex_iterator(source.begin(), source.end(), range); it != std::sregex_iterator();
           ++it) {
        const long first = std::stol((*it)[1].str()), last = std::stol((*it)[2].str());
        EXPECT_GE(first, 1) << caps.name << " " << row.feature << ": " << source;
        EXPECT_LT(first, last) << caps.name << " " << row.feature << ": " << source;
      }
    }
  }
}

TEST(EngineCapabilitySources, FeaturesAreNamedOncePerTable) {
  for (Engine e : kEngines) {
    const EngineCapabilities& caps = engine_capabilities(e);
    for (std::size_t i = 0; i < caps.sources.size(); ++i)
      for (std::size_t j = i + 1; j < caps.sources.size(); ++j)
        EXPECT_NE(std::string(caps.sources[i].feature), caps.sources[j].feature) << caps.name;
  }
}

// docs/engines.md prints the tables row for row.
TEST(EngineCapabilitySources, DocsPrintEveryRow) {
  std::ifstream in(std::filesystem::path(PARPLAN_SOURCE_DIR) / "docs" / "engines.md");
  ASSERT_TRUE(in) << "docs/engines.md";
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  for (Engine e : kEngines) {
    const EngineCapabilities& caps = engine_capabilities(e);
    const std::string heading = std::string("## `") + caps.name + "`: " + caps.revision + "\n";
    EXPECT_NE(doc.find(heading), std::string::npos) << heading;
    for (const CapabilitySource& row : caps.sources) {
      const std::string line =
          std::string("| ") + row.feature + " | " + row.value + " | `" + row.source + "` |\n";
      EXPECT_NE(doc.find(line), std::string::npos) << caps.name << ": " << line;
    }
  }
}

ModelSpec moe_model() {
  ModelSpec m;
  m.layers = 32;
  m.experts = 8;
  m.top_k = 2;
  return m;
}

// Megatron-LM core_r0.13.0 has no --overlap-moe-expert-parallel-comm (its
// arguments.py has only --moe-shared-expert-overlap, :2721); the switch
// arrives in core_v0.14.0.
TEST(EngineCapabilitySources, MegatronAtCoreR013HasNoExpertAllToAllOverlap) {
  const ModelSpec model = moe_model();
  ASSERT_TRUE(model.is_moe());
  JobSpec job;
  ParallelConfig c;
  c.ep = 4;
  c.ep_overlap = true;
  EXPECT_NE(capability_problem(engine_capabilities(Engine::kMegatron), model, job, c), nullptr);
  c.ep_overlap = false;
  EXPECT_EQ(capability_problem(engine_capabilities(Engine::kMegatron), model, job, c), nullptr);
}

// torchtitan main shards routed experts over ep only (moe_sharding.py
// expert_param_placement_sparse has no tp axis), so etp is 1 once ep > 1.
TEST(EngineCapabilitySources, TorchtitanMainKeepsExpertTensorParallelismAtOneWithEp) {
  const ModelSpec model = moe_model();
  JobSpec job;
  ParallelConfig c;
  c.tp = 2;
  c.sp = true;
  c.ep = 4;
  c.etp = 2;
  EXPECT_NE(capability_problem(engine_capabilities(Engine::kTorchtitan), model, job, c), nullptr);
  c.etp = 1;
  EXPECT_EQ(capability_problem(engine_capabilities(Engine::kTorchtitan), model, job, c), nullptr);
  // Megatron-LM lets etp be any size (expert_tensor_parallel_size).
  c.etp = 2;
  EXPECT_EQ(capability_problem(engine_capabilities(Engine::kMegatron), model, job, c), nullptr);
}

}  // namespace
}  // namespace parplan
