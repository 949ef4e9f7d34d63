#include "src/io/run_sources.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/io/megatron_log_reader.h"
#include "src/io/run_file_reader.h"
#include "src/io/torchtitan_log_reader.h"

namespace parplan {

namespace {
namespace fs = std::filesystem;

void load_file_runs(const fs::path& path, const ClusterSpec& cluster, std::vector<FitRun>& out,
                    std::vector<std::string>* notes, bool in_folder);

// The limits a job file has (seq, gbs, GPUs, the model's sizes), for the runs
// of every reader: an absurd run would pull the fit to its bounds.
void load_file(const fs::path& path, const ClusterSpec& cluster, std::vector<FitRun>& out,
               std::vector<std::string>* notes, bool in_folder) {
  const std::size_t first = out.size();
  load_file_runs(path, cluster, out, notes, in_folder);
  for (std::size_t i = first; i < out.size(); ++i) {
    try {
      check_input_limits(out[i].model, out[i].own_cluster ? *out[i].own_cluster : cluster, out[i].job);
    } catch (const InputError& e) {
      throw InputError(path.string() + ": run " + out[i].name + ": " + e.what());
    }
  }
}

void load_file_runs(const fs::path& path, const ClusterSpec& cluster, std::vector<FitRun>& out,
                    std::vector<std::string>* notes, bool in_folder) {
  const std::string e = path.extension().string();
  if (e == ".yaml" || e == ".yml") {
    const auto runs = read_run_yaml(path.string(), cluster);
    out.insert(out.end(), runs.begin(), runs.end());
    return;
  }
  if (e == ".csv") {
    const auto runs = read_run_csv(path.string(), cluster);
    out.insert(out.end(), runs.begin(), runs.end());
    return;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot read the log (" + std::strerror(errno) + ")");
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().rfind("\x1f\x8b", 0) == 0)
    throw InputError(path.string() + ": is gzip-compressed; decompress it first (gunzip)");
  // A trial that ran out of memory measured nothing the fit can use; the
  // loop goes on without it (tune's probes may not fit the real cluster).
  if (text.str().find("torch.OutOfMemoryError") != std::string::npos ||
      text.str().find("CUDA out of memory") != std::string::npos) {
    if (!notes) throw InputError(path.string() + ": the run ran out of GPU memory; leave its log out");
    notes->push_back(path.string() +
                     ": the run ran out of GPU memory (its log says so); left out of the fit");
    return;
  }
  if (looks_like_torchtitan_log(text.str())) {
    out.push_back(read_torchtitan_log(path.string(), cluster));
    return;
  }
  // A folder of logs may hold a README or notes beside them.
  if (!looks_like_megatron_log(text.str()) && in_folder && e == ".txt" && notes) {
    notes->push_back(path.string() + ": not a training log; left out");
    return;
  }
  if (!looks_like_megatron_log(text.str()))
    throw InputError(path.string() +
                     ": not a run file (.yaml, .csv), a Megatron-LM log (no arguments block, no "
                     "'elapsed time per iteration (ms)' lines) nor a torchtitan log (no 'step: N  loss: ...  "
                     "tps: ...' lines)");
  out.push_back(parse_megatron_log(text.str(), path.string(), cluster));
}

/// A file reached twice (a path repeated, a link to it, or a file beside
/// its own folder) would be fitted twice, weighing its runs double; so
/// would one log copied under another name (a log's run is named after its
/// file, so the run names differ).
void check_once(const fs::path& file, const std::string& given, std::map<fs::path, std::string>& seen,
                std::map<std::size_t, std::string>& logs) {
  std::error_code ec;
  const fs::path resolved = fs::canonical(file, ec);
  const auto [it, added] = seen.emplace(ec ? file.lexically_normal() : resolved, given);
  if (!added)
    throw InputError("--runs " + given + ": " + file.string() + " is already read through --runs " +
                     it->second + "; give each run file once");
  const std::string e = file.extension().string();
  if (e == ".yaml" || e == ".yml" || e == ".csv") return;
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().empty()) return;
  const auto [log, new_log] = logs.emplace(std::hash<std::string>{}(text.str()), file.string());
  if (!new_log)
    throw InputError("--runs: " + file.string() + " holds the same log as " + log->second +
                     "; give each run once");
}
}  // namespace

bool run_file_name(const fs::path& p) {
  const std::string e = p.extension().string();
  return e == ".yaml" || e == ".yml" || e == ".csv" || e == ".log" || e == ".txt";
}

std::vector<FitRun> load_runs(const std::vector<std::string>& paths, const ClusterSpec& cluster,
                              std::vector<std::string>* notes) {
  std::vector<FitRun> out;
  std::vector<std::string> files_of_runs;
  std::map<fs::path, std::string> seen;
  std::map<std::size_t, std::string> logs;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> files;
      fs::directory_iterator it(p, ec), end;
      if (ec) throw InputError("--runs " + p + ": cannot list the directory (" + ec.message() + ")");
      for (; it != end; it.increment(ec)) {
        if (ec) throw InputError("--runs " + p + ": cannot list the directory (" + ec.message() + ")");
        std::error_code entry_ec;
        if (it->is_regular_file(entry_ec) && run_file_name(it->path())) files.push_back(it->path());
      }
      std::sort(files.begin(), files.end());
      if (files.empty())
        throw InputError("--runs " + p + ": the directory holds no .yaml, .yml, .csv, .log or .txt files");
      for (const auto& f : files) check_once(f, p, seen, logs);
      for (const auto& f : files) {
        load_file(f, cluster, out, notes, true);
        files_of_runs.resize(out.size(), f.string());
      }
    } else if (fs::is_regular_file(p, ec)) {
      check_once(p, p, seen, logs);
      load_file(p, cluster, out, notes, false);
      files_of_runs.resize(out.size(), p);
    } else if (fs::exists(p, ec)) {
      throw InputError("--runs " + p +
                       ": is not a regular file or a directory; give run files or a folder of them");
    } else if (ec && ec != std::errc::no_such_file_or_directory) {
      throw InputError("--runs " + p + ": cannot be read (" + ec.message() + ")");
    } else {
      throw InputError("--runs " + p + ": no such file or directory");
    }
  }
  // Runs of one name from two files: the same run given twice (it would
  // weigh double, and each copy would predict the other when left out) or
  // two runs the report could not tell apart.
  std::map<std::string, std::size_t> names;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto [it, added] = names.emplace(out[i].name, i);
    if (!added)
      throw InputError("--runs: run '" + out[i].name + "' is in " + files_of_runs[it->second] + " and in " +
                       files_of_runs[i] + "; give each run once, under its own name (rename one)");
  }
  if (out.empty()) throw InputError("--runs: every run ran out of GPU memory; nothing was measured to fit");
  return out;
}

}  // namespace parplan
