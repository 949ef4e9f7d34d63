#include "src/report/sweep_slurm_array.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "src/io/input_error.h"
#include "src/io/write_error.h"
#include "src/report/sweep_report.h"

namespace parplan {

namespace fs = std::filesystem;

namespace {

const std::string kFlag = "--emit-slurm-array";

std::string quoted(const std::string& word) {
  std::string out = "'";
  for (char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

/// The engine of a point's launch files: the one its plan was tagged with
/// (the sweep's `engine` column), else the array's.
Engine engine_of(const SweepOutcome& o, const SlurmArrayOptions& options) {
  return o.engine >= 0 ? static_cast<Engine>(o.engine) : options.engine;
}

std::string point_dir_name(int row) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "point-%04d", row);
  return buffer;
}

/// One "#SBATCH" line: option and value ("-N", "16"; "--gpus-per-node", "8").
struct SbatchLine {
  std::string key, value;
  char separator = ' ';
};

/// The header of a batch script: its #SBATCH lines and the "# ====" marker
/// comments between them, in order (everything up to the first other line).
std::vector<std::string> header_lines(const fs::path& script) {
  std::ifstream in(script);
  std::vector<std::string> lines;
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (first && line.rfind("#!", 0) == 0) {
      first = false;
      continue;
    }
    first = false;
    if (line.rfind("#SBATCH ", 0) == 0 || line.rfind("# ====", 0) == 0) {
      lines.push_back(line);
    } else {
      break;
    }
  }
  return lines;
}

bool parse_sbatch(const std::string& line, SbatchLine& out) {
  if (line.rfind("#SBATCH ", 0) != 0) return false;
  const std::string option = line.substr(8);
  const auto cut = option.find_first_of(" =");
  out.key = option.substr(0, cut);
  out.separator = cut == std::string::npos ? ' ' : option[cut];
  out.value = cut == std::string::npos ? "" : option.substr(cut + 1);
  return true;
}

/// Seconds of a Slurm time ([D-]HH:MM:SS, MM:SS or minutes).
long time_seconds(const std::string& text) {
  long days = 0;
  std::string rest = text;
  if (const auto dash = text.find('-'); dash != std::string::npos) {
    days = std::atol(text.substr(0, dash).c_str());
    rest = text.substr(dash + 1);
  }
  std::vector<long> parts;
  std::stringstream in(rest);
  std::string part;
  while (std::getline(in, part, ':')) parts.push_back(std::atol(part.c_str()));
  long seconds = 0;
  if (parts.size() == 1 && days == 0)
    seconds = parts[0] * 60;
  else if (parts.size() == 1)
    seconds = parts[0] * 3600;
  else if (parts.size() == 2 && days == 0)
    seconds = parts[0] * 60 + parts[1];
  else if (parts.size() == 2)
    seconds = parts[0] * 3600 + parts[1] * 60;
  else if (parts.size() >= 3)
    seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
  return days * 86400 + seconds;
}

std::string point_name(const SweepGrid& grid, const SweepOutcome& o) {
  return "point " + std::to_string(o.point.index) + " (" +
         grid.models.at(static_cast<std::size_t>(o.point.model_index)).name + ", " +
         std::to_string(o.point.job.gpus) + " GPUs, gbs " + std::to_string(o.point.job.gbs) + ")";
}

std::string one_line(const std::string& text) {
  std::string out = text;
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

struct Group {
  int nodes = 0, gpus_per_node = 0;
  std::vector<int> ids;
  std::string time;
};

std::string array_script(const SlurmArrayResult& result, const std::vector<std::string>& head,
                         const std::string& entry, const SlurmArrayOptions& options) {
  const auto& tasks = result.tasks;
  int max_nodes = 0, max_gpus = 0;
  std::string max_time;
  for (const SlurmArrayTask& t : tasks) {
    max_nodes = std::max(max_nodes, t.nodes);
    max_gpus = std::max(max_gpus, t.gpus_per_node);
    if (max_time.empty() || time_seconds(t.time) > time_seconds(max_time)) max_time = t.time;
  }
  const int n = static_cast<int>(tasks.size());
  std::ostringstream s;
  s << "#!/bin/bash\n";
  s << "#SBATCH -J parplan-sweep\n";
  s << "#SBATCH --array=0-" << n - 1 << "%" << options.array_parallel << "\n";
  for (const std::string& line : head) {
    SbatchLine opt;
    if (!parse_sbatch(line, opt)) {
      s << line << "\n";
      continue;
    }
    if (opt.key == "-J" || opt.key == "--job-name" || opt.key == "-o" || opt.key == "--output" ||
        opt.key == "-e" || opt.key == "--error" || opt.key == "--array" || opt.key == "-a")
      continue;
    if (opt.key == "-N" || opt.key == "--nodes") {
      s << "#SBATCH " << opt.key << opt.separator << max_nodes
        << "\n# ^ the largest point's node count: every task of one array gets the same allocation (see "
           "below)\n";
    } else if (opt.key == "-t" || opt.key == "--time") {
      s << "#SBATCH " << opt.key << opt.separator << (max_time.empty() ? opt.value : max_time) << "\n";
    } else if (opt.key == "--gpus-per-node" && max_gpus > 0) {
      s << "#SBATCH " << opt.key << opt.separator << max_gpus << "\n";
    } else {
      s << line << "\n";
    }
  }
  s << "#SBATCH -o parplan-sweep-%A_%a.out\n";
  s << "#\n";
  s << "# parplan sweep: " << n << " feasible points as one Slurm job array, at most "
    << options.array_parallel << " running at a time.\n";
  s << "# Task i runs the point on line i+1 of points.txt (\"point-NNNN NODES\", NNNN = the sweep's row):\n";
  s << "# its own launch files in point-NNNN/, entry script " << entry << ".\n";
  s << "#\n";
  s << "# Node counts differ per point, but Slurm gives every task of one array the same\n";
  s << "# allocation. Submitted as it is (sbatch array.sbatch), every task gets the -N above,\n";
  s << "# the largest point's, and a smaller point runs on the first NODES nodes of it while\n";
  s << "# the rest stay idle. Prefer ./submit_all.sh: it submits this script once per node\n";
  s << "# count, with -N, -t and --array on the sbatch command line (they override the lines\n";
  s << "# above), so every task is allocated exactly what its plan needs.\n";
  s << "set -euo pipefail\n";
  s << "DEFAULT_SWEEP_DIR=" << quoted(result.dir.string()) << "\n";
  s << "SWEEP_DIR=\"${PARPLAN_SWEEP_DIR:-$DEFAULT_SWEEP_DIR}\"\n";
  s << "TASK=\"${SLURM_ARRAY_TASK_ID:?array.sbatch: SLURM_ARRAY_TASK_ID is unset; submit it with sbatch or "
       "submit_all.sh}\"\n";
  s << "LINE=\"$(sed -n \"$((TASK + 1))p\" \"$SWEEP_DIR/points.txt\")\"\n";
  s << "if [ -z \"$LINE\" ]; then\n"
    << "  echo \"array.sbatch: task $TASK has no line in $SWEEP_DIR/points.txt (" << n << " points)\" >&2\n"
    << "  exit 1\nfi\n";
  s << "read -r POINT NODES <<< \"$LINE\"\n";
  s << "POINT_DIR=\"$SWEEP_DIR/$POINT\"\n";
  s << "ALLOCATED=\"${SLURM_JOB_NUM_NODES:-$NODES}\"\n";
  s << "if [ \"$ALLOCATED\" -lt \"$NODES\" ]; then\n"
    << "  echo \"array.sbatch: $POINT needs $NODES nodes but the task has $ALLOCATED\" >&2\n  exit 1\nfi\n";
  s << "if [ \"$ALLOCATED\" -gt \"$NODES\" ]; then\n"
    << "  # Run the point on the first NODES nodes of the allocation (its scripts read these).\n"
    << "  NODELIST=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | awk -v n=\"$NODES\" 'NR <= n' | "
       "paste -sd, "
       "-)\"\n"
    << "  export SLURM_JOB_NODELIST=\"$NODELIST\" SLURM_NODELIST=\"$NODELIST\"\n"
    << "  export SLURM_JOB_NUM_NODES=\"$NODES\" SLURM_NNODES=\"$NODES\"\n"
    << "  echo \"array.sbatch: $POINT uses $NODES of the $ALLOCATED allocated nodes: $NODELIST\" >&2\n"
    << "fi\n";
  s << "export PARPLAN_LAUNCH_DIR=\"$POINT_DIR\"\n";
  s << "echo \"array.sbatch: task $TASK runs $POINT_DIR/" << entry << " on $NODES node(s)\"\n";
  s << "exec bash \"$POINT_DIR/" << entry << "\"\n";
  return s.str();
}

std::string submit_script(const SlurmArrayResult& result, const SlurmArrayOptions& options) {
  // One array per (nodes, GPUs per node), smallest first.
  std::map<std::pair<int, int>, Group> groups;
  for (std::size_t i = 0; i < result.tasks.size(); ++i) {
    const SlurmArrayTask& t = result.tasks[i];
    Group& g = groups[{t.nodes, t.gpus_per_node}];
    g.nodes = t.nodes;
    g.gpus_per_node = t.gpus_per_node;
    g.ids.push_back(static_cast<int>(i));
    if (g.time.empty() || time_seconds(t.time) > time_seconds(g.time)) g.time = t.time;
  }
  std::ostringstream s;
  s << "#!/usr/bin/env bash\n";
  s << "# parplan sweep: submits array.sbatch once per node count (" << groups.size() << " job array"
    << (groups.size() == 1 ? "" : "s") << " for " << result.tasks.size() << " points).\n";
  s << "#\n";
  s << "# Why not one array: Slurm gives every task of an array the same allocation, and the\n";
  s << "# points need different node counts. sbatch options on the command line override the\n";
  s << "# script's #SBATCH lines, so each array here asks for exactly its points' nodes, GPUs\n";
  s << "# per node and longest wall time. The arrays run one after another (afterany\n";
  s << "# dependency), each with at most " << options.array_parallel << " tasks at a time: at most "
    << options.array_parallel << " points run at once.\n";
  s << "# Edit the account/partition placeholders in array.sbatch first (PARPLAN-EDIT).\n";
  s << "# SBATCH may name another sbatch command, e.g. SBATCH=\"sbatch --qos=high\" ./submit_all.sh\n";
  s << "set -euo pipefail\n";
  s << "DEFAULT_SWEEP_DIR=" << quoted(result.dir.string()) << "\n";
  s << "SWEEP_DIR=\"${PARPLAN_SWEEP_DIR:-$DEFAULT_SWEEP_DIR}\"\n";
  s << "SBATCH=\"${SBATCH:-sbatch}\"\n";
  s << "PREVIOUS=\"\"\n";
  s << "# submit TASKS SBATCH-OPTIONS...\n";
  s << "submit() {\n";
  s << "  local tasks=\"$1\"\n  shift\n";
  s << "  local after=()\n";
  s << "  if [ -n \"$PREVIOUS\" ]; then after=(--dependency=\"afterany:$PREVIOUS\"); fi\n";
  s << "  local id\n";
  s << "  # shellcheck disable=SC2086\n";
  s << "  id=\"$($SBATCH --parsable ${after[@]+\"${after[@]}\"} \"$@\" --array=\"$tasks%"
    << options.array_parallel << "\" \"$SWEEP_DIR/array.sbatch\")\"\n";
  s << "  PREVIOUS=\"${id%%;*}\"\n";
  s << "  echo \"submitted tasks $tasks ($*) as job $PREVIOUS\"\n";
  s << "}\n";
  for (const auto& [key, g] : groups) {
    s << "submit " << slurm_array_ranges(g.ids) << " -N " << g.nodes;
    if (g.gpus_per_node > 0) s << " --gpus-per-node=" << g.gpus_per_node;
    if (!g.time.empty()) s << " -t " << g.time;
    s << "\n";
  }
  return s.str();
}

/// Removes what emit_slurm_array wrote when it fails half-way.
struct Cleanup {
  fs::path dir;
  bool created_dir = false;
  std::vector<fs::path> written;
  bool armed = true;
  ~Cleanup() {
    if (!armed) return;
    std::error_code ec;
    if (created_dir) {
      fs::remove_all(dir, ec);
      return;
    }
    for (const fs::path& p : written) fs::remove_all(p, ec);
  }
};

}  // namespace

std::string slurm_array_ranges(const std::vector<int>& ids) {
  std::ostringstream out;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    out << (i ? "," : "") << ids[i];
    if (j > i) out << "-" << ids[j];
    i = j + 1;
  }
  return out.str();
}

fs::path check_slurm_array_dir(const fs::path& requested) {
  if (requested.empty()) throw InputError(kFlag + ": give the directory to write the job array into");
  std::error_code ec;
  fs::path dir = fs::absolute(requested, ec).lexically_normal();
  if (ec) throw InputError(kFlag + ": cannot resolve " + requested.string() + ": " + ec.message());
  if (dir.filename().empty()) dir = dir.parent_path();
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec))
      throw InputError(kFlag + ": " + dir.string() + " exists and is not a directory");
    if (!fs::is_empty(dir, ec))
      throw InputError(kFlag + ": " + dir.string() + " is not empty; choose a new directory or empty it");
    return dir;
  }
  // The nearest existing ancestor must be a writable directory.
  fs::path up = dir.parent_path();
  while (!up.empty() && !fs::exists(up, ec) && up != up.parent_path()) up = up.parent_path();
  if (!fs::is_directory(up, ec))
    throw InputError(kFlag + ": cannot create " + dir.string() + ": " + up.string() + " is not a directory");
  const fs::path probe = up / (".parplan-probe-" + std::to_string(::getpid()));
  if (!fs::create_directory(probe, ec) || ec)
    throw InputError(kFlag + ": cannot create " + dir.string() + ": " + up.string() + " is not writable");
  fs::remove(probe, ec);
  return dir;
}

SlurmArrayResult emit_slurm_array(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes,
                                  const SlurmArrayOptions& options) {
  SlurmArrayResult result;
  result.dir = check_slurm_array_dir(options.dir);

  // Points the engine accepts; the others are reported and left out.
  std::vector<const SweepOutcome*> accepted;
  for (const SweepOutcome& o : outcomes) {
    if (!o.feasible) continue;
    const Engine engine = engine_of(o, options);
    const std::vector<std::string> violations = engine_rule_violations(plan_of(grid, o), engine);
    if (!violations.empty()) {
      result.skipped.push_back(
          point_name(grid, o) + ": " + engine_name(engine) +
          " rejects the plan: " + one_line(violations.front()) +
          (violations.size() > 1 ? " (+" + std::to_string(violations.size() - 1) + " more)" : ""));
      continue;
    }
    accepted.push_back(&o);
  }
  if (accepted.empty()) return result;

  std::error_code ec;
  Cleanup cleanup;
  cleanup.dir = result.dir;
  cleanup.created_dir = !fs::exists(result.dir, ec);
  fs::create_directories(result.dir, ec);
  if (ec) throw InputError(kFlag + ": cannot create " + result.dir.string() + ": " + ec.message());

  std::vector<std::string> head;
  std::string entry;
  for (const SweepOutcome* o : accepted) {
    SlurmArrayTask task;
    task.row = o->point.index;
    task.point_dir = point_dir_name(task.row);
    const fs::path point_dir = result.dir / task.point_dir;
    std::vector<fs::path> files;
    try {
      EmitOptions emit;
      emit.engine = engine_of(*o, options);
      emit.launcher = Launcher::kSlurm;
      emit.torchtitan_version = options.torchtitan_version;
      emit.out_dir = point_dir;
      emit.train_iters = options.train_iters;
      emit.hours = options.hours;
      files = emit_launch_files(plan_of(grid, *o), emit);
    } catch (const WriteError& e) {
      // A write failure is not a refused plan: stop, do not skip the point.
      throw WriteError(kFlag + ": " + one_line(e.what()));
    } catch (const InputError& e) {
      // The emitter refuses (e.g. the ranks do not fill whole nodes); it wrote nothing.
      if (fs::exists(point_dir, ec)) throw InputError(kFlag + ": " + one_line(e.what()));
      result.skipped.push_back(point_name(grid, *o) + ": " + one_line(e.what()));
      continue;
    }
    cleanup.written.push_back(point_dir);
    if (files.empty())
      throw InputError(kFlag + ": the launch-file writer wrote nothing for " + point_name(grid, *o));
    const fs::path& script = files.front();
    if (entry.empty()) entry = script.filename().string();
    const std::vector<std::string> lines = header_lines(script);
    if (head.empty()) head = lines;
    for (const std::string& line : lines) {
      SbatchLine opt;
      if (!parse_sbatch(line, opt)) continue;
      if (opt.key == "-N" || opt.key == "--nodes") task.nodes = std::atoi(opt.value.c_str());
      if (opt.key == "--gpus-per-node") task.gpus_per_node = std::atoi(opt.value.c_str());
      if (opt.key == "-t" || opt.key == "--time") task.time = opt.value;
    }
    if (task.nodes <= 0)
      throw InputError(kFlag + ": " + script.string() + " has no #SBATCH -N line; cannot build the array");
    result.tasks.push_back(task);
  }
  if (result.tasks.empty()) return result;  // cleanup removes the directory it created

  std::ostringstream list;
  for (const SlurmArrayTask& t : result.tasks) list << t.point_dir << " " << t.nodes << "\n";
  const std::vector<std::pair<std::string, std::pair<std::string, bool>>> top = {
      {"points.txt", {list.str(), false}},
      {"array.sbatch", {array_script(result, head, entry, options), true}},
      {"submit_all.sh", {submit_script(result, options), true}},
  };
  for (const auto& [name, file] : top) {
    cleanup.written.push_back(result.dir / name);
    write_file_atomically(result.dir / name, file.first, kFlag, file.second);
  }
  cleanup.armed = false;
  return result;
}

}  // namespace parplan
