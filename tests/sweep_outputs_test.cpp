// parplan sweep outputs: CSV and JSON rows, the SVG plot, and the Slurm job
// array (run with stand-in scontrol/srun/sbatch that record what they get).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/plan/sweep.h"
#include "src/report/sweep_plot.h"
#include "src/report/sweep_report.h"
#include "src/report/sweep_slurm_array.h"
#include "tests/temp_dir.h"

namespace parplan {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

/// Exit status of a shell command line.
int run_shell(const std::string& command) {
  const int status = std::system((command + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The fields of one RFC 4180 CSV line (no embedded newlines).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        out.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.emplace_back();
    } else {
      out.back() += ch;
    }
  }
  return out;
}

/// gpt-1t and gpt-1.7b on 8, 64 and 512 A100s, two batches: gpt-1t has no
/// plan on 8 or 64 GPUs (16 bytes per parameter of model state alone is 16 TB).
struct Fixture {
  SweepGrid grid;
  std::vector<SweepOutcome> outcomes;
};

Fixture sweep(const std::string& models, std::vector<int> gpus, std::vector<int> gbs) {
  Fixture f;
  f.grid.models = load_sweep_models(models, "--models");
  f.grid.cluster = load_cluster("dgx-a100");
  f.grid.gpus = std::move(gpus);
  f.grid.gbs = std::move(gbs);
  f.grid.seq = 2048;
  // One engine's space: these tests are of the outputs, not the engines
  // (--engine any searches each engine, tests/engine_any_test.cpp).
  PlannerOptions options;
  options.engines = single_engine(Engine::kMegatron);
  f.outcomes = evaluate_sweep(f.grid, sweep_points(f.grid), options);
  return f;
}

const Fixture& mixed() {
  static const Fixture f = sweep("gpt-1t,gpt-1.7b", {8, 64, 512}, {512, 1024});
  return f;
}

// ------------------------------------------------------------ CSV, JSON ----

TEST(SweepCsv, OneRowPerPointWithTheDocumentedColumns) {
  const Fixture& f = mixed();
  const std::vector<std::string> lines = lines_of(sweep_csv(f.grid, f.outcomes));
  ASSERT_EQ(lines.size(), f.outcomes.size() + 1);
  const std::vector<std::string> header = csv_fields(lines[0]);
  EXPECT_EQ(header, sweep_columns());
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < header.size(); ++i) at[header[i]] = i;
  // The columns the issue asks for (ep, ZeRO variant, lossy flags, attention, limiter, HFU).
  for (const char* name :
       {"engine", "ep", "zero_variant", "qwz", "qgz", "lossy_comm", "attention", "limiter", "hfu"})
    EXPECT_EQ(at.count(name), 1u) << name;
  int infeasible = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> row = csv_fields(lines[i]);
    ASSERT_EQ(row.size(), header.size()) << lines[i];
    const SweepOutcome& o = f.outcomes[i - 1];
    EXPECT_EQ(row[at["gpus"]], std::to_string(o.point.job.gpus));
    EXPECT_EQ(row[at["gbs"]], std::to_string(o.point.job.gbs));
    EXPECT_EQ(row[at["feasible"]], o.feasible ? "true" : "false");
    if (o.feasible) {
      // dp is world / (tp * cp * pp).
      EXPECT_EQ(std::stoi(row[at["tp"]]) * std::stoi(row[at["pp"]]) * std::stoi(row[at["dp"]]) *
                    std::stoi(row[at["cp"]]),
                o.point.job.gpus);
      // HFU counts recomputation: never below MFU.
      EXPECT_GE(std::stod(row[at["hfu"]]), std::stod(row[at["mfu"]]));
      // Exact collectives by default.
      EXPECT_EQ(row[at["lossy_comm"]], "false");
      EXPECT_TRUE(row.back().empty());
    } else {
      ++infeasible;
      EXPECT_TRUE(row[at["tp"]].empty());
      EXPECT_FALSE(row.back().empty());  // the reason, quoted: it holds commas
    }
  }
  EXPECT_EQ(infeasible, 4);  // gpt-1t on 8 and 64 GPUs, two batches each
}

TEST(SweepJson, PointsWithNullsWhereThereIsNoPlan) {
  const Fixture& f = mixed();
  const nlohmann::ordered_json j = sweep_json(f.grid, f.outcomes, 0.5);
  ASSERT_EQ(j["points"].size(), f.outcomes.size());
  EXPECT_EQ(j["sweep"]["cluster"], "dgx-a100");
  EXPECT_EQ(j["sweep"]["points"], f.outcomes.size());
  for (std::size_t i = 0; i < f.outcomes.size(); ++i) {
    const auto& p = j["points"][i];
    EXPECT_EQ(p["feasible"], f.outcomes[i].feasible);
    EXPECT_EQ(p["tp"].is_null(), !f.outcomes[i].feasible);
    EXPECT_EQ(p["reason"].is_null(), f.outcomes[i].feasible);
  }
}

TEST(SweepFiles, AtomicWriteReplacesAndLeavesNoTemporary) {
  TempDir dir;
  const fs::path file = dir.path / "out.csv";
  write_file_atomically(file, "one\n", "--csv");
  write_file_atomically(file, "two\n", "--csv");
  EXPECT_EQ(read_file(file), "two\n");
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path)) ++entries;
  EXPECT_EQ(entries, 1);
  EXPECT_THROW(write_file_atomically(dir.path / "missing" / "x.csv", "x", "--csv"), InputError);
  EXPECT_THROW(check_output_path(dir.path, "--csv"), InputError);  // a directory
  EXPECT_FALSE(fs::exists(dir.path / "missing"));
}

// ------------------------------------------------------------------ SVG ----

/// Checks the document is well nested: every element closed in order, no
/// stray '<' or '&' in text. Returns the element names in document order.
std::vector<std::string> xml_elements(const std::string& svg, std::string& problem) {
  std::vector<std::string> stack, names;
  std::size_t at = 0;
  while (at < svg.size()) {
    const std::size_t open = svg.find('<', at);
    const std::string text = svg.substr(at, open == std::string::npos ? std::string::npos : open - at);
    for (std::size_t amp = text.find('&'); amp != std::string::npos; amp = text.find('&', amp + 1)) {
      const std::string rest = text.substr(amp);
      if (rest.rfind("&amp;", 0) && rest.rfind("&lt;", 0) && rest.rfind("&gt;", 0) &&
          rest.rfind("&quot;", 0) && rest.rfind("&apos;", 0))
        problem = "bare & in text";
    }
    if (open == std::string::npos) break;
    const std::size_t close = svg.find('>', open);
    if (close == std::string::npos) {
      problem = "unclosed tag";
      break;
    }
    const std::string tag = svg.substr(open + 1, close - open - 1);
    if (tag.find('<') != std::string::npos) problem = "'<' inside a tag";
    if (tag.empty()) {
      problem = "empty tag";
    } else if (tag[0] == '/') {
      if (stack.empty() || stack.back() != tag.substr(1)) {
        problem = "mismatched </" + tag.substr(1) + ">";
        break;
      }
      stack.pop_back();
    } else {
      const std::string name = tag.substr(0, tag.find_first_of(" \n/"));
      names.push_back(name);
      if (tag.back() != '/') stack.push_back(name);
    }
    at = close + 1;
  }
  if (!stack.empty() && problem.empty()) problem = "unclosed <" + stack.back() + ">";
  return names;
}

void expect_self_contained(const std::string& svg) {
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  std::string problem;
  const std::vector<std::string> names = xml_elements(svg, problem);
  EXPECT_EQ(problem, "");
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "svg");
  EXPECT_EQ(count(svg, "<svg"), 1);
  for (const char* banned : {"<script", "javascript:", "href", "url(", "@import", "<image", "<foreignObject",
                             " onload", " onclick", "<iframe"})
    EXPECT_EQ(svg.find(banned), std::string::npos) << banned;
  // The only URI is the SVG namespace.
  EXPECT_EQ(count(svg, "http"), 1);
  // Axes with ticks and labels, and a legend.
  EXPECT_NE(svg.find("MFU (%)"), std::string::npos);
  EXPECT_NE(svg.find("step time (s"), std::string::npos);
  EXPECT_NE(svg.find("legend"), std::string::npos);
}

TEST(SweepPlot, OneLinePerModelAndBatchInEachPanel) {
  const Fixture& f = mixed();
  const std::string svg = sweep_svg(f.grid, f.outcomes);
  expect_self_contained(svg);
  // Series with at least one point with a plan, counted from the outcomes.
  std::set<std::pair<int, int>> drawn;
  for (const SweepOutcome& o : f.outcomes)
    if (o.feasible) drawn.insert({o.point.model_index, o.point.job.gbs});
  EXPECT_EQ(drawn.size(), 4u);  // both models have a plan on 512 GPUs at both batches
  EXPECT_EQ(count(svg, "<polyline"), 2 * static_cast<int>(drawn.size()));
  // A marker per point with a plan, per panel.
  int feasible = 0;
  for (const SweepOutcome& o : f.outcomes) feasible += o.feasible;
  EXPECT_EQ(count(svg, "<circle"), 2 * feasible);
  EXPECT_NE(svg.find("GPUs (log scale)"), std::string::npos);
  // gpt-1t has no plan on 8 or 64 GPUs at either batch: its row says so.
  EXPECT_NE(svg.find(">gpt-1t: 4 of 6 points without a plan (not drawn)<"), std::string::npos);
  // One legend entry per batch size, not one per line.
  for (int gbs : f.grid.gbs) EXPECT_EQ(count(svg, ">gbs " + std::to_string(gbs) + "<"), 1) << gbs;
  // Every swept GPU count is a tick label.
  for (int g : f.grid.gpus) EXPECT_NE(svg.find(">" + std::to_string(g) + "</text>"), std::string::npos) << g;
}

TEST(SweepPlot, SeriesWithoutAnyPlanIsInTheLegendOnly) {
  const Fixture f = sweep("gpt-1t,gpt-1.7b", {8, 64}, {512});
  const std::string svg = sweep_svg(f.grid, f.outcomes);
  expect_self_contained(svg);
  EXPECT_EQ(count(svg, "<polyline"), 2);  // gpt-1.7b only
  EXPECT_NE(svg.find(">gpt-1t: no point has a plan<"), std::string::npos);
}

TEST(SweepPlot, OneGpuCountPlotsAgainstModelSize) {
  const Fixture f = sweep("gpt-1.7b,gpt-7.5b,gpt-39.1b,gpt-145.6b", {512}, {512, 1024, 1536});
  ASSERT_TRUE(sweep_plot_by_model_size(f.grid));
  const std::string svg = sweep_svg(f.grid, f.outcomes);
  expect_self_contained(svg);
  EXPECT_EQ(count(svg, "<polyline"), 2 * 3);  // one line per batch size
  EXPECT_NE(svg.find("model size"), std::string::npos);
  EXPECT_NE(svg.find(">10B</text>"), std::string::npos);
  EXPECT_NE(svg.find(">100B</text>"), std::string::npos);
}

TEST(SweepPlot, NamesAreEscaped) {
  Fixture f = mixed();
  f.grid.models[0].name = "a&b<c>\"d'";
  const std::string svg = sweep_svg(f.grid, f.outcomes);
  expect_self_contained(svg);
  EXPECT_NE(svg.find("a&amp;b&lt;c&gt;&quot;d&apos;"), std::string::npos);
}

TEST(SweepPlot, NoPlanAtAllStillDrawsAxes) {
  const Fixture f = sweep("gpt-1t", {8}, {512});
  const std::string svg = sweep_svg(f.grid, f.outcomes);
  expect_self_contained(svg);
  EXPECT_EQ(count(svg, "<polyline"), 0);
  EXPECT_NE(svg.find("no point has a plan (the table and CSV give why)"), std::string::npos);
}

// ----------------------------------------------------------- Slurm array ----

/// Stand-ins for scontrol, srun and sbatch that record what they are given.
fs::path make_stubs(const fs::path& dir) {
  const fs::path bin = dir / "bin";
  fs::create_directories(bin);
  const std::map<std::string, std::string> stubs = {
      {"scontrol", "#!/bin/bash\n[ \"$1 $2\" = \"show hostnames\" ] && echo \"$3\" | tr , '\\n'\n"},
      {"srun",
       "#!/bin/bash\n{ echo \"$*\"; echo \"NNODES=$NNODES\"; echo \"MASTER_ADDR=$MASTER_ADDR\"; } > "
       "\"$RECORD/srun\"\n"},
      {"sbatch",
       "#!/bin/bash\necho \"$*\" >> \"$RECORD/sbatch\"\necho \"$((1000 + $(wc -l < "
       "\"$RECORD/sbatch\"))));x\"\n"},
  };
  for (const auto& [name, text] : stubs) {
    std::ofstream(bin / name) << text;
    fs::permissions(bin / name, fs::perms::owner_all);
  }
  return bin;
}

TEST(SweepSlurm, ArrayCoversEveryFeasiblePointWithItsOwnDirectory) {
  const Fixture& f = mixed();
  TempDir tmp;
  const fs::path dir = tmp.path / "array";
  const SlurmArrayResult r = emit_slurm_array(f.grid, f.outcomes, {Engine::kMegatron, dir, 3});
  int feasible = 0;
  for (const SweepOutcome& o : f.outcomes) feasible += o.feasible;
  const int n = static_cast<int>(r.tasks.size());
  ASSERT_GT(n, 0);
  EXPECT_EQ(n + static_cast<int>(r.skipped.size()), feasible);

  const std::string script = read_file(dir / "array.sbatch");
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_NE(script.find("\n#SBATCH --array=0-" + std::to_string(n - 1) + "%3\n"), std::string::npos);
  EXPECT_NE(script.find("SLURM_ARRAY_TASK_ID"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH -A PARPLAN_ACCOUNT"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH -p PARPLAN_PARTITION"), std::string::npos);
  EXPECT_NE(script.find("PARPLAN-EDIT"), std::string::npos);
  int max_nodes = 0;
  for (const SlurmArrayTask& t : r.tasks) max_nodes = std::max(max_nodes, t.nodes);
  EXPECT_NE(script.find("\n#SBATCH -N " + std::to_string(max_nodes) + "\n"), std::string::npos);

  const std::vector<std::string> list = lines_of(read_file(dir / "points.txt"));
  ASSERT_EQ(static_cast<int>(list.size()), n);
  std::set<int> rows;
  for (int i = 0; i < n; ++i) {
    std::stringstream line(list[static_cast<std::size_t>(i)]);
    std::string point;
    int nodes = 0;
    line >> point >> nodes;
    const SlurmArrayTask& t = r.tasks[static_cast<std::size_t>(i)];
    EXPECT_EQ(point, t.point_dir);
    EXPECT_TRUE(fs::is_directory(dir / point)) << point;
    const fs::path entry = dir / point / "job.sbatch";
    ASSERT_TRUE(fs::is_regular_file(entry)) << entry;
    EXPECT_NE(fs::status(entry).permissions() & fs::perms::owner_exec, fs::perms::none);
    // The point's node count is the world over 8 GPUs per node.
    const SweepOutcome& o = f.outcomes.at(static_cast<std::size_t>(t.row));
    EXPECT_TRUE(o.feasible);
    EXPECT_EQ(nodes, o.point.job.gpus / 8);
    EXPECT_NE(read_file(entry).find("#SBATCH -N " + std::to_string(nodes) + "\n"), std::string::npos);
    char name[32];
    std::snprintf(name, sizeof name, "point-%04d", t.row);
    EXPECT_EQ(point, name);
    rows.insert(t.row);
  }
  EXPECT_EQ(static_cast<int>(rows.size()), n);
}

TEST(SweepSlurm, ArrayTaskRunsItsPointOnItsOwnNodeCount) {
  const Fixture& f = mixed();
  TempDir tmp;
  const fs::path dir = tmp.path / "array";
  const SlurmArrayResult r = emit_slurm_array(f.grid, f.outcomes, {Engine::kMegatron, dir, 4});
  const fs::path bin = make_stubs(tmp.path);
  const fs::path record = tmp.path / "record";
  fs::create_directories(record);
  int max_nodes = 0;
  for (const SlurmArrayTask& t : r.tasks) max_nodes = std::max(max_nodes, t.nodes);
  std::string nodelist;
  for (int i = 1; i <= max_nodes; ++i) nodelist += (i > 1 ? "," : "") + ("n" + std::to_string(i));
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    const SlurmArrayTask& t = r.tasks[i];
    fs::remove(record / "srun");
    // As `sbatch array.sbatch` runs it: every task holds the largest allocation.
    const std::string env = "PATH=" + bin.string() + ":$PATH RECORD=" + record.string() +
                            " SLURM_ARRAY_TASK_ID=" + std::to_string(i) +
                            " SLURM_JOB_NUM_NODES=" + std::to_string(max_nodes) +
                            " SLURM_JOB_NODELIST=" + nodelist;
    ASSERT_EQ(run_shell(env + " bash " + (dir / "array.sbatch").string()), 0) << i;
    const std::vector<std::string> srun = lines_of(read_file(record / "srun"));
    ASSERT_EQ(srun.size(), 3u);
    EXPECT_EQ(srun[0], "-N " + std::to_string(t.nodes) + " --ntasks-per-node=1 " +
                           (dir / t.point_dir / "launch.sh").string());
    EXPECT_EQ(srun[1], "NNODES=" + std::to_string(t.nodes));
    EXPECT_EQ(srun[2], "MASTER_ADDR=n1");
  }
  // A task beyond the list fails instead of running something else.
  EXPECT_NE(run_shell("PATH=" + bin.string() + ":$PATH SLURM_ARRAY_TASK_ID=" +
                      std::to_string(r.tasks.size()) + " bash " + (dir / "array.sbatch").string()),
            0);
}

TEST(SweepSlurm, SubmitAllGivesEveryTaskExactlyItsNodes) {
  const Fixture& f = mixed();
  TempDir tmp;
  const fs::path dir = tmp.path / "array";
  const SlurmArrayResult r = emit_slurm_array(f.grid, f.outcomes, {Engine::kMegatron, dir, 2});
  const fs::path bin = make_stubs(tmp.path);
  const fs::path record = tmp.path / "record";
  fs::create_directories(record);
  ASSERT_EQ(run_shell("PATH=" + bin.string() + ":$PATH RECORD=" + record.string() + " bash " +
                      (dir / "submit_all.sh").string()),
            0);
  const std::vector<std::string> calls = lines_of(read_file(record / "sbatch"));
  ASSERT_FALSE(calls.empty());
  std::map<int, int> task_nodes;  // task -> -N of its submission
  const std::regex nodes_re(" -N ([0-9]+) "), array_re(" --array=([0-9,-]+)%2 ");
  for (std::size_t c = 0; c < calls.size(); ++c) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(calls[c], m, nodes_re)) << calls[c];
    const int nodes = std::stoi(m[1]);
    ASSERT_TRUE(std::regex_search(calls[c], m, array_re)) << calls[c];
    std::stringstream ids(m[1]);
    std::string range;
    while (std::getline(ids, range, ',')) {
      const auto dash = range.find('-');
      const int lo = std::stoi(range.substr(0, dash));
      const int hi = dash == std::string::npos ? lo : std::stoi(range.substr(dash + 1));
      for (int t = lo; t <= hi; ++t)
        EXPECT_TRUE(task_nodes.emplace(t, nodes).second) << "task " << t << " twice";
    }
    EXPECT_NE(calls[c].find((dir / "array.sbatch").string()), std::string::npos);
    // Each array waits for the one before it: at most K tasks at once overall.
    if (c == 0) {
      EXPECT_EQ(calls[c].find("--dependency"), std::string::npos);
    } else {
      EXPECT_NE(calls[c].find("--dependency=afterany:" + std::to_string(1000 + c)), std::string::npos);
    }
  }
  ASSERT_EQ(task_nodes.size(), r.tasks.size());
  for (std::size_t i = 0; i < r.tasks.size(); ++i)
    EXPECT_EQ(task_nodes.at(static_cast<int>(i)), r.tasks[i].nodes);
}

TEST(SweepSlurm, NothingWrittenWithoutAFeasiblePoint) {
  const Fixture f = sweep("gpt-1t", {8, 64}, {512});
  TempDir tmp;
  const SlurmArrayResult r = emit_slurm_array(f.grid, f.outcomes, {Engine::kMegatron, tmp.path / "array", 4});
  EXPECT_TRUE(r.tasks.empty());
  EXPECT_FALSE(fs::exists(tmp.path / "array"));
}

TEST(SweepSlurm, RefusesANonEmptyDirectory) {
  TempDir tmp;
  std::ofstream(tmp.path / "keep.txt") << "x";
  EXPECT_THROW(check_slurm_array_dir(tmp.path), InputError);
  EXPECT_THROW(emit_slurm_array(mixed().grid, mixed().outcomes, {Engine::kMegatron, tmp.path, 4}),
               InputError);
  EXPECT_EQ(read_file(tmp.path / "keep.txt"), "x");
}

TEST(SweepSlurm, ArrayRangesCompress) {
  EXPECT_EQ(slurm_array_ranges({0, 1, 2, 3, 5, 7, 8}), "0-3,5,7-8");
  EXPECT_EQ(slurm_array_ranges({4}), "4");
}

}  // namespace
}  // namespace parplan
