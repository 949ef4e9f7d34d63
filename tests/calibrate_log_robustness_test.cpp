// Training logs as users hand them to `calibrate`: a run restarted from a
// checkpoint, two runs in one file, a batch-size ramp-up, torchrun's rank
// prefixes, lines longer than the matcher reads, CSV files from Excel or
// Windows, the same run in two files. Each either reads the step the run
// ran at (the median of the iterations past each launch's warm-up) or is
// refused with one line naming the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "cost/step_cost.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/input_error.h"
#include "src/io/megatron_log_reader.h"
#include "src/io/model_loader.h"
#include "src/io/run_sources.h"
#include "src/io/torchtitan_log_reader.h"
#include "src/tune/simulated_log.h"
#include "tests/cli_support.h"

namespace parplan {
namespace calibrate_log_robustness_test {

namespace fs = std::filesystem;
using test::expect_cli_refusal;
using test::write_temp;

struct Trial {
  ModelSpec model = load_model("llama3-8b");
  ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job;
  ParallelConfig config;
  Trial() {
    job.gpus = 16, job.gbs = 128, job.seq = 4096;
    apply_engine_recipe("megatron", job);
    config.tp = 2, config.dp = 8, config.mbs = 2, config.gbs = 128, config.zero = 1, config.sp = true;
  }
};

/// The arguments block of a simulated log (everything before the first
/// iteration line).
std::string arguments_of(const std::string& log) { return log.substr(0, log.find(" [simulated] iteration")); }

std::string iteration_line(long long it, double ms, int gbs) {
  char line[300];
  std::snprintf(line, sizeof line,
                " [2024-05-01 10:00:00] iteration %8lld/%8d | consumed samples: %12lld | elapsed time per "
                "iteration (ms): %.1f | global batch size: %5d | lm loss: 1.0E+01 | loss scale: 1.0 |\n",
                it, 100, it * gbs, ms, gbs);
  return line;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string megatron_arguments(const Trial& t, int log_interval = 1) {
  return arguments_of(simulated_megatron_log(t.model, t.job, t.config, 3.0, 20, log_interval));
}

/// The Megatron log is refused, with a message that names each of `mentions`.
void expect_megatron_log_refused(const std::string& log, const std::string& origin, const Trial& t,
                                 std::initializer_list<const char*> mentions) {
  try {
    parse_megatron_log(log, origin, t.cluster);
    ADD_FAILURE() << origin << " was read";
  } catch (const InputError& e) {
    for (const char* mention : mentions)
      EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
  }
}

TEST(CalibrateLogRobustness, ARestartedRunSkipsEachLaunchsWarmUp) {
  const Trial t;
  const std::string args = megatron_arguments(t);
  std::string log = args;
  std::vector<double> kept;
  for (int it = 1; it <= 20; ++it) {
    const double ms = it <= 3 ? 9000.0 : 3000.0 + it;
    log += iteration_line(it, ms, 128);
    if (it > 3) kept.push_back(ms);
  }
  // Restarted from the checkpoint of iteration 20: the same arguments, the
  // first three iterations slow again.
  log += args;
  for (int it = 21; it <= 30; ++it) {
    const double ms = it <= 23 ? 9000.0 - it : 3050.0;
    log += iteration_line(it, ms, 128);
    if (it > 23) kept.push_back(ms);
  }
  const FitRun run = parse_megatron_log(log, "resumed.log", t.cluster);
  EXPECT_NEAR(run.measured_step_s, median(kept) / 1000.0, 1e-9);
}

TEST(CalibrateLogRobustness, TwoRunsInOneMegatronLogAreRefused) {
  Trial t;
  std::string log = megatron_arguments(t);
  for (int it = 1; it <= 10; ++it) log += iteration_line(it, 3000, 128);
  t.job.gbs = t.config.gbs = 256;
  log += megatron_arguments(t);
  for (int it = 1; it <= 10; ++it) log += iteration_line(it, 6000, 256);
  expect_megatron_log_refused(log, "two.log", t, {"holds two runs", "global_batch_size"});
}

// --rampup-batch-size: the first iterations run smaller global batches; the
// run's step is that of its full batch.
TEST(CalibrateLogRobustness, BatchSizeRampUpIterationsAreLeftOut) {
  const Trial t;
  std::string log = megatron_arguments(t);
  std::vector<double> kept;
  for (int it = 1; it <= 20; ++it) {
    const int gbs = it <= 10 ? 64 : 128;
    const double ms = gbs == 64 ? 1500.0 + it : 3000.0 + it;
    log += iteration_line(it, ms, gbs);
    if (gbs == 128) kept.push_back(ms);
  }
  EXPECT_NEAR(parse_megatron_log(log, "rampup.log", t.cluster).measured_step_s, median(kept) / 1000.0, 1e-9);
  std::string ramp_only = megatron_arguments(t);
  for (int it = 1; it <= 20; ++it) ramp_only += iteration_line(it, 1500, 64);
  EXPECT_THROW(parse_megatron_log(ramp_only, "ramp-only.log", t.cluster), InputError);
}

// fp16's loss-scale search skips the optimizer step of its first
// iterations (Megatron counts them per window): those windows are faster
// than the run's steps and left out; a log with nothing else is refused.
TEST(CalibrateLogRobustness, WindowsWithSkippedOrNanIterationsAreLeftOut) {
  const Trial t;
  const auto line = [](int it, double ms, int skipped, int nan) {
    std::string l = iteration_line(it, ms, 128);
    l.pop_back();
    return l + " number of skipped iterations: " + std::to_string(skipped) +
           " | number of nan iterations: " + std::to_string(nan) + " |\n";
  };
  std::string log = megatron_arguments(t);
  std::vector<double> kept;
  for (int it = 1; it <= 20; ++it) {
    const bool skipped = it <= 12;
    const double ms = skipped ? 2500.0 + it : 3000.0 + it;
    log += line(it, ms, skipped ? 1 : 0, it == 20 ? 1 : 0);
    if (!skipped && it != 20) kept.push_back(ms);
  }
  EXPECT_NEAR(parse_megatron_log(log, "fp16.log", t.cluster).measured_step_s, median(kept) / 1000.0, 1e-9);
  std::string skipped_only = megatron_arguments(t);
  for (int it = 1; it <= 8; ++it) skipped_only += line(it, 2500, 1, 0);
  expect_megatron_log_refused(skipped_only, "skipped.log", t, {"skipped or NaN iterations"});
}

// report_memory prints each model-parallel rank's allocator figures in MB
// (MiB): the peak is the largest "max reserved" of them.
TEST(CalibrateLogRobustness, PeakMemoryIsTheLargestMaxReservedOfTheRanks) {
  const Trial t;
  std::string log = megatron_arguments(t);
  for (int it = 1; it <= 10; ++it) {
    log += iteration_line(it, 3000, 128);
    if (it == 2)
      for (int rank : {0, 1})
        log += "[Rank " + std::to_string(rank) +
               "] (after 2 iterations) memory (MB) | allocated: 20480.00 | max allocated: 30720.00 | "
               "reserved: 35840.00 | max reserved: " +
               (rank ? "40960.00" : "38912.00") + "\n";
  }
  EXPECT_DOUBLE_EQ(parse_megatron_log(log, "memory.log", t.cluster).measured_peak_bytes, 40.0 * (1ull << 30));
  std::string without = megatron_arguments(t);
  for (int it = 1; it <= 10; ++it) without += iteration_line(it, 3000, 128);
  EXPECT_EQ(parse_megatron_log(without, "none.log", t.cluster).measured_peak_bytes, 0.0);
}

// torchrun --tee prefixes each line with its rank; a metrics line may carry
// thousands of characters of other fields after the time.
TEST(CalibrateLogRobustness, RankPrefixesAndLongLinesReadAsTheEnginePrintedThem) {
  const Trial t;
  std::string plain = megatron_arguments(t);
  for (int it = 1; it <= 20; ++it) plain += iteration_line(it, 3000.0 + 10 * it, 128);
  const double expected = parse_megatron_log(plain, "plain.log", t.cluster).measured_step_s;
  std::istringstream in(plain);
  std::string prefixed, long_lines;
  for (std::string line; std::getline(in, line);) {
    prefixed += "[default0]:" + line + "\n";
    const bool iteration = line.find("elapsed time per iteration") != std::string::npos;
    long_lines += line + (iteration ? " extra_metric: " + std::string(5000, '7') + " |" : "") + "\n";
  }
  EXPECT_EQ(parse_megatron_log(prefixed, "tee.log", t.cluster).measured_step_s, expected);
  EXPECT_EQ(parse_megatron_log(long_lines, "long.log", t.cluster).measured_step_s, expected);
  // srun --label numbers each line with its task, before torchrun's prefix.
  std::istringstream again(plain);
  std::string labelled;
  for (std::string line; std::getline(again, line);) labelled += " 0: [default0]:" + line + "\n";
  EXPECT_EQ(parse_megatron_log(labelled, "srun.log", t.cluster).measured_step_s, expected);
}

// Megatron prints its arguments before the tokenizer pads the vocabulary:
// the padded size is on its own line after the block, as the simulated log
// writes it; without it the run is refused naming the field.
TEST(CalibrateLogRobustness, ThePaddedVocabularyIsReadFromTheTokenizersLine) {
  const Trial t;
  std::string log = simulated_megatron_log(t.model, t.job, t.config, 3.0, 20, 1);
  EXPECT_EQ(log.find("padded_vocab_size"), std::string::npos);
  const std::string line = " > padded vocab (size: 128256) with 0 dummy tokens (new size: 128256)";
  ASSERT_NE(log.find(line), std::string::npos);
  EXPECT_EQ(parse_megatron_log(log, "vocab.log", t.cluster).model.vocab, 128256);
  log.replace(log.find(line), line.size(), "");
  expect_megatron_log_refused(log, "no-vocab.log", t, {"padded_vocab_size"});
}

// Megatron-DeepSpeed's own names: --num-key-value-heads (grouped-query
// attention), --use-rotary-position-embeddings, and --zero-stage printed as
// its default 1.0.
TEST(CalibrateLogRobustness, MegatronDeepSpeedNamesItsOwnArguments) {
  Trial t;
  apply_engine_recipe("megatron-deepspeed", t.job);
  std::string log = simulated_megatron_log(t.model, t.job, t.config, 3.0, 20, 1, Engine::kMegatronDeepSpeed);
  const auto set_arg = [&](const std::string& name, const std::string& value) {
    const std::size_t at = log.find("  " + name + " ");
    ASSERT_NE(at, std::string::npos) << name;
    const std::size_t end = log.find('\n', at);
    log.replace(at, end - at, "  " + name + " ........ " + value);
  };
  const auto drop_arg = [&](const std::string& name) {
    const std::size_t at = log.find("  " + name + " ");
    if (at != std::string::npos) log.erase(at, log.find('\n', at) + 1 - at);
  };
  for (const char* megatron_lm_only :
       {"group_query_attention", "num_query_groups", "position_embedding_type"})
    drop_arg(megatron_lm_only);
  const std::string end = "-------------------- end of arguments";
  log.insert(log.find(end),
             "  num_key_value_heads ........ 8\n  use_rotary_position_embeddings ........ True\n");
  set_arg("zero_stage", "1.0");
  const FitRun run = parse_megatron_log(log, "mds.log", t.cluster);
  EXPECT_EQ(run.model.kv_groups, 8);
  EXPECT_EQ(run.model.position, PositionKind::kRope);
  EXPECT_EQ(run.config.zero, 1);
}

// Every rank logs its metrics: ranks' logs one after another read as rank
// 0's; a second run from step 1 in the same file is refused.
TEST(CalibrateLogRobustness, TorchtitanRanksAndASecondRun) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const fs::path fixtures = data_dir() / "tests/calibrate_fixtures";
  const std::string log = test::slurp((fixtures / "torchtitan-llama3-8b-16gpu.log").string());
  const fs::path dir = fs::path(::testing::TempDir()) / ("parplan_titan_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(fixtures / "torchtitan-llama3-8b-16gpu.toml", dir / "run.toml",
                fs::copy_options::overwrite_existing);
  const auto read_with = [&](const std::string& text) {
    std::ofstream(dir / "run.log") << text;
    return read_torchtitan_log((dir / "run.log").string(), cluster);
  };
  const double one_rank_s = read_with(log).measured_step_s;
  std::string rank1 = log;
  for (std::size_t at = 0; (at = rank1.find("[rank0]", at)) != std::string::npos; at += 7)
    rank1.replace(at, 7, "[rank1]");
  EXPECT_EQ(read_with(log + rank1).measured_step_s, one_rank_s);
  // Validation metrics (torchtitan's log_validation, at step 1 and every
  // freq steps) are not training steps.
  std::string validated;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    validated += line + "\n";
    if (line.find("step:") != std::string::npos && line.find("tps:") != std::string::npos)
      validated +=
          "[rank0]:[titan] 2025-01-01 00:00:00,000 - root - INFO - validate step:  1  loss:  7.5000  "
          "memory: 60.00GiB(75.85%)  tps: 9,000\n";
  }
  EXPECT_EQ(read_with(validated).measured_step_s, one_rank_s);
  // srun --label: two nodes' lines interleaved read as the first task's.
  std::string labelled;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    labelled += "0: " + line + "\n";
    if (line.find("tps:") != std::string::npos) {
      std::string other = "1: " + line;
      other.replace(other.find("[rank0]"), 7, "[rank8]");
      labelled += other + "\n";
    }
  }
  EXPECT_EQ(read_with(labelled).measured_step_s, one_rank_s);
  try {
    read_with(log + log);
    FAIL() << "a second run from step 1 was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("holds two runs"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(CalibrateLogRobustness, ExcelAndWindowsCsvFilesRead) {
  const std::string rows =
      "name,model,gpus,gbs,seq,tp,pp,mbs,zero,step_s\n"
      "a,llama3-8b,32,256,4096,1,1,2,1,3.0\n";
  const std::string plain = write_temp("plain.csv", rows);
  const std::string bom = write_temp("bom.csv", "\xEF\xBB\xBF" + rows);
  std::string crlf_text;
  for (const char ch : rows + "\n" + "b,llama3-8b,32,256,4096,1,1,2,1,3.1\n") {
    if (ch == '\n') crlf_text += '\r';
    crlf_text += ch;
  }
  const std::string crlf = write_temp("crlf.csv", crlf_text);
  const ClusterSpec cluster = load_cluster("dgx-h100");
  EXPECT_EQ(load_runs({bom}, cluster).size(), 1u);
  EXPECT_EQ(load_runs({bom}, cluster)[0].measured_step_s, load_runs({plain}, cluster)[0].measured_step_s);
  EXPECT_EQ(load_runs({crlf}, cluster).size(), 2u);  // the blank CR LF line between them skipped
}

TEST(CalibrateLogRobustness, CsvWithoutItsHeaderRowIsRefusedAsSuch) {
  // Read as a header, the first run's values made "column '1' is given twice".
  const std::string rows = "a,llama3-8b,32,256,4096,1,1,2,1,3.0\n";
  expect_cli_refusal("calibrate --cluster dgx-h100 --runs " + write_temp("noheader.csv", rows),
                     "the first row must name the columns");
}

TEST(CalibrateLogRobustness, OneRunInTwoFilesIsRefused) {
  const std::string rows =
      "name,model,gpus,gbs,seq,tp,pp,mbs,zero,step_s\n"
      "a,llama3-8b,32,256,4096,1,1,2,1,3.0\n";
  const std::string x = write_temp("x.csv", rows), y = write_temp("y.csv", rows);
  expect_cli_refusal("calibrate --cluster dgx-h100 --runs " + x + " " + y, "run 'a' is in");
}

TEST(CalibrateLogRobustness, OneLogUnderTwoNamesIsRefused) {
  const Trial t;
  std::string log = megatron_arguments(t);
  for (int it = 1; it <= 20; ++it) log += iteration_line(it, 3000, 128);
  const std::string a = write_temp("first.log", log), b = write_temp("copy.log", log);
  expect_cli_refusal("calibrate --cluster dgx-h100 --runs " + a + " " + b, "holds the same log as");
}

TEST(CalibrateLogRobustness, AConstantNoRunDependsOnIsRefused) {
  // Megatron's recipe runs cuDNN attention on an H100: FlashAttention's
  // efficiency prices none of these runs.
  const Trial t;
  std::string log = megatron_arguments(t);
  for (int it = 1; it <= 20; ++it) log += iteration_line(it, 3000, 128);
  const std::string path = write_temp("cudnn.log", log);
  expect_cli_refusal("calibrate --cluster dgx-h100 --runs " + path + " --fit flash_attention_efficiency",
                     "flash_attention_efficiency");
  const std::string gz = write_temp("gz.log", std::string("\x1f\x8b\x08\x00", 4) + "compressed");
  expect_cli_refusal("calibrate --cluster dgx-h100 --runs " + gz, "gzip");
}

}  // namespace calibrate_log_robustness_test
}  // namespace parplan
