#include "src/io/batch_limits_block.h"

#include <algorithm>
#include <string>

#include "src/io/input_error.h"

namespace parplan {

BatchLimits read_batch_limits_block(const YamlFields& f) {
  f.allow_only({"partition", "source", "bins"});
  BatchLimits limits;
  limits.partition = f.text("partition");
  // A limit without its source cannot be checked when the site changes it.
  limits.source = f.text("source");
  const YAML::Node bins = f.node("bins");
  if (!bins.IsSequence() || bins.size() == 0)
    f.fail("bins", "must be a non-empty list of {min_nodes, max_nodes, max_hours}");
  if (bins.size() > 64) f.fail("bins", "may hold at most 64 bins");
  for (std::size_t i = 0; i < bins.size(); ++i) {
    YamlFields b(bins[i], f.where(), f.full("bins") + "[" + std::to_string(i) + "].");
    b.allow_only({"min_nodes", "max_nodes", "max_hours"});
    WallTimeBin bin;
    if (!b.has("min_nodes") || !b.has("max_nodes") || !b.has("max_hours"))
      b.fail_here(f.full("bins") + "[" + std::to_string(i) + "] needs min_nodes, max_nodes and max_hours");
    bin.min_nodes = static_cast<int>(*b.integer("min_nodes", 1, 1 << 20));
    bin.max_nodes = static_cast<int>(*b.integer("max_nodes", 1, 1 << 20));
    if (bin.max_nodes < bin.min_nodes) b.fail("max_nodes", "must be at least min_nodes");
    bin.max_hours = b.number_in("max_hours", 1.0 / 60.0, 24.0 * 365.0, 0.0);
    limits.bins.push_back(bin);
  }
  // The site's table may list the bins in any order; they must tile 1..N.
  std::sort(limits.bins.begin(), limits.bins.end(),
            [](const WallTimeBin& a, const WallTimeBin& b) { return a.min_nodes < b.min_nodes; });
  int next = 1;
  for (const WallTimeBin& bin : limits.bins) {
    if (bin.min_nodes != next)
      f.fail("bins", "must cover node counts from 1 without gaps or overlaps (a bin starts at " +
                         std::to_string(bin.min_nodes) + ", expected " + std::to_string(next) + ")");
    next = bin.max_nodes + 1;
  }
  return limits;
}

}  // namespace parplan
