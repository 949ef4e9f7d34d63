// A heterogeneous plan under Slurm: Slurm numbers a job's nodes in its own
// (sorted) order, but the node groups, their NCCL settings and the rank
// order follow the hostfile. Each node takes its line in the hostfile as its
// rank, rank 0 is the hostfile's first node, and a node the hostfile does
// not name stops with a message rather than training with another group's
// transport.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "emit_fixtures/emit_test_util.h"
#include "tests/cli_support.h"

namespace parplan::emit_test {
namespace {

TEST(EmitHeterogeneousSlurm, EachNodeTakesItsRankFromTheHostfile) {
  TempDir dir;
  const fs::path out = dir.path / "out";
  const test::CliRun plan = test::run_cli(
      "plan --model gpt-7.5b --cluster holmes-mixed --gpus 64 --gbs 128 "
      "--seq 2048 --zero 1 --emit megatron --launcher slurm --out " +
      out.string());
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const fs::path stubs = make_stubs(dir.path);
  const fs::path record = dir.path / "record";
  fs::create_directories(record);
  const std::map<std::string, std::string> vars = {
      {"MEGATRON_LM", "/opt/mlm"},  {"DATA_PATH", "/data/a"},         {"TOKENIZER_MODEL", "gpt2"},
      {"SLURM_JOB_NUM_NODES", "8"}, {"SLURM_JOB_NODELIST", "n[0-7]"}, {"NODE_RANK", ""},
      {"MASTER_ADDR", ""}};
  const std::string sbatch = "bash " + (out / "job.sbatch").string();
  // The hostfile's placeholder names: this host is not among them.
  const RunResult unnamed = run_clean(stubs, record, sbatch, vars);
  EXPECT_EQ(unnamed.rc, 1) << unnamed.output;
  EXPECT_NE(unnamed.output.find("is not in hostfile"), std::string::npos) << unnamed.output;
  // This host named third (an InfiniBand node, rank 2), another first.
  char host[256] = "";
  ASSERT_EQ(::gethostname(host, sizeof host), 0);
  std::string name = host;
  name = name.substr(0, name.find('.'));
  std::string hostfile = read_text(out / "hostfile");
  hostfile.replace(hostfile.find("ib-node-0"), 9, "first-host");
  hostfile.replace(hostfile.find("ib-node-2"), 9, name);
  std::ofstream(out / "hostfile") << hostfile;
  const RunResult named = run_clean(stubs, record, sbatch, vars);
  ASSERT_EQ(named.rc, 0) << named.output;
  const ArgMap args = parse_args(read_lines(record / "torchrun.args"));
  EXPECT_EQ(args.value("--node_rank"), "2");
  EXPECT_EQ(args.value("--master_addr"), "first-host");
  EXPECT_EQ(read_env(record / "torchrun.env")["NCCL_NET"], "IB");
}

}  // namespace
}  // namespace parplan::emit_test
