// #SBATCH -t: iterations x predicted step time (+ margin) + start-up, capped at
// the site's limit for the node count (OLCF Frontier's scheduling policy in
// hardware-profiles/frontier.yaml); torchrun on Frontier is refused.
#include "emit_fixtures/emit_test_util.h"
#include "src/emit/wall_time.h"
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"

namespace parplan::emit_test {
namespace {

// "#SBATCH -t" value of a script.
std::string sbatch_time(const fs::path& script) {
  for (const std::string& line : read_lines(script))
    if (line.rfind("#SBATCH -t ", 0) == 0) return line.substr(11);
  return "";
}

long long seconds_of(const std::string& hhmmss) {
  int h = 0, m = 0, s = 0;
  if (std::sscanf(hhmmss.c_str(), "%d:%d:%d", &h, &m, &s) != 3) return -1;
  return h * 3600LL + m * 60LL + s;
}

// The GPT-22B Frontier plan on 128 nodes (1024 GCDs) with the shipped profile.
Plan frontier_128_nodes(double step_s) {
  Plan plan = frontier_22b_on_128_gcds();
  plan.cluster = load_cluster("frontier");
  set_mesh(plan, 1024, 2, 4, 1, 1);
  set_batch(plan, 1024, 1, 2048);
  plan.cost.time.step_s = step_s;
  return plan;
}

TEST(EmitWallTime, FrontierProfileHoldsOlcfBins) {
  // OLCF Frontier User Guide, "Job Priority by Node Count": 1-91 nodes 2 h,
  // 92-183 6 h, 184 and more 12 h.
  const ClusterSpec frontier = load_cluster("frontier");
  ASSERT_EQ(frontier.batch_limits.bins.size(), 5u);
  EXPECT_EQ(frontier.batch_limits.partition, "batch");
  const auto& bins = frontier.batch_limits.bins;
  EXPECT_EQ(bins[0].max_nodes, 91);
  EXPECT_DOUBLE_EQ(bins[0].max_hours, 2.0);
  EXPECT_EQ(bins[1].min_nodes, 92);
  EXPECT_EQ(bins[1].max_nodes, 183);
  EXPECT_DOUBLE_EQ(bins[1].max_hours, 6.0);
  for (std::size_t i = 2; i < bins.size(); ++i) EXPECT_DOUBLE_EQ(bins[i].max_hours, 12.0);
}

TEST(EmitWallTime, Frontier128NodesIsCappedAtSixHours) {
  // 1000 iterations x 30 s x 1.1 + 15 min = 9.4 h, over the 6 h of 92-183 nodes.
  const Plan plan = frontier_128_nodes(30.0);
  TempDir dir;
  std::vector<std::string> notes;
  EmitOptions options{Engine::kMegatron, Launcher::kSlurm, dir.path / "out"};
  const std::vector<fs::path> files = emit_launch_files(plan, options, &notes);
  const std::string t = sbatch_time(files.front());
  EXPECT_EQ(t, "06:00:00");
  EXPECT_LE(seconds_of(t), 6 * 3600);
  // Iterations that fit: (6 h - 15 min) / (30 s x 1.1) = 627.
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("about 627 of 1000 iterations"), std::string::npos) << notes[0];
  const std::string text = read_text(files.front());
  EXPECT_NE(text.find("#SBATCH -p batch"), std::string::npos);
  EXPECT_NE(text.find("docs.olcf.ornl.gov"), std::string::npos);
}

TEST(EmitWallTime, TrainItersAndHoursSizeTheRequest) {
  const Plan plan = frontier_128_nodes(30.0);
  // 100 iterations: 100 x 33 s + 900 s = 4200 s = 70 min, under the cap.
  WallTime w = plan_wall_time(plan, 128, 100, 0);
  EXPECT_EQ(w.seconds, 4200);
  EXPECT_FALSE(w.capped);
  EXPECT_EQ(w.train_iters, 100);
  // 2 hours: (7200 - 900) / 33 = 190 iterations.
  w = plan_wall_time(plan, 128, 0, 2.0);
  EXPECT_EQ(w.seconds, 7200);
  EXPECT_EQ(w.train_iters, 190);
  // 20 hours on 128 nodes: capped at 6 h.
  w = plan_wall_time(plan, 128, 0, 20.0);
  EXPECT_TRUE(w.capped);
  EXPECT_EQ(w.seconds, 6 * 3600);
  // Without a site limit: D-HH:MM:SS beyond a day, and a note.
  Plan generic = gpt3_175b_on_1024_a100();
  w = plan_wall_time(generic, 128, 5000, 0);  // 5000 x 33 s + 900 s = 46.1 h
  EXPECT_EQ(slurm_time(w.seconds), "1-22:05:00");
  EXPECT_EQ(w.notes.size(), 1u);
  EXPECT_THROW(plan_wall_time(plan, 128, 10, 1.0), InputError);
  EXPECT_THROW(plan_wall_time(plan, 128, 0, 0.1), InputError);  // 6 min < start-up
}

TEST(EmitWallTime, DefaultIterationsAreStatedInTheScript) {
  Plan plan = gpt3_175b_on_1024_a100();
  TempDir dir;
  const std::vector<fs::path> files =
      emit_launch_files(plan, {Engine::kMegatron, Launcher::kSlurm, dir.path / "out"});
  // 1000 x 30 s x 1.1 + 900 s = 33900 s = 9 h 25 min.
  EXPECT_EQ(sbatch_time(files.front()), "09:25:00");
  const std::string text = read_text(files.front());
  EXPECT_NE(text.find("1000 iterations (assumed: --train-iters not given)"), std::string::npos);
  EXPECT_NE(read_text(dir.path / "out" / "launch.sh").find("TRAIN_ITERS=\"${TRAIN_ITERS:-1000}\""),
            std::string::npos);
}

TEST(EmitWallTime, TorchrunOnFrontierIsRefused) {
  const Plan plan = frontier_128_nodes(30.0);
  TempDir dir;
  try {
    emit_launch_files(plan, {Engine::kMegatron, Launcher::kTorchrun, dir.path / "out"});
    FAIL() << "torchrun on Frontier was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("srun"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(dir.path / "out"));
}

TEST(EmitWallTime, FrontierScriptHasTheOlcfGuideLines) {
  const Plan plan = frontier_128_nodes(30.0);
  TempDir dir;
  const std::vector<fs::path> files =
      emit_launch_files(plan, {Engine::kMegatron, Launcher::kSlurm, dir.path / "out"});
  const std::string text = read_text(files.front());
  for (const char* line :
       {"PrgEnv-gnu cpe rocm rccl-net-plugin craype-accel-amd-gfx90a", "CRAY_LD_LIBRARY_PATH",
        "PYTHON_ENV_ACTIVATE", "export NCCL_SOCKET_IFNAME=hsn0,hsn1,hsn2,hsn3",
        "export NCCL_NET_GDR_LEVEL=PHB", "export FI_CXI_RDZV_PROTO=alt_read",
        "export FI_MR_CACHE_MONITOR=kdreg2", "#SBATCH --network=disable_rdzv_get", "pytorch_frontier.html"})
    EXPECT_NE(text.find(line), std::string::npos) << line;
}

}  // namespace
}  // namespace parplan::emit_test
