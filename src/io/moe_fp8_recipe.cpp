#include "src/io/moe_fp8_recipe.h"

#include <cmath>
#include <sstream>

#include "src/io/input_error.h"

namespace parplan {

Fp8Scaling parse_fp8_recipe(const std::string& text, const std::string& field) {
  if (text == "delayed") return Fp8Scaling::kDelayed;
  if (text == "current") return Fp8Scaling::kCurrent;
  throw InputError(field + " must be delayed or current (got '" + text + "')");
}

const char* fp8_recipe_name(Fp8Scaling scaling) {
  return scaling == Fp8Scaling::kCurrent ? "current" : "delayed";
}

void check_capacity_factor(double factor, const std::string& field) {
  if (std::isfinite(factor) && factor >= kMinCapacityFactor && factor <= kMaxCapacityFactor) return;
  std::ostringstream out;
  out << field << " must be a number from " << kMinCapacityFactor << " to " << kMaxCapacityFactor
      << " (tokens an expert takes over its fair share; got " << factor
      << "); leave it out for dropless routing";
  throw InputError(out.str());
}

void check_moe_fp8_recipe(const ModelSpec& model, const JobSpec& job, bool fp8_recipe_given,
                          const MoeFp8RecipeFields& fields) {
  if (job.capacity_factor != 0) check_capacity_factor(job.capacity_factor, fields.capacity_factor);
  if (job.pad_to_capacity && job.capacity_factor <= 0)
    throw InputError(fields.pad_to_capacity +
                     " needs a capacity factor to pad to (moe_capacity_factor, --moe-capacity-factor); give "
                     "one or leave padding out");
  if (!model.is_moe()) {
    if (job.capacity_factor > 0)
      throw InputError(fields.capacity_factor + ": model " + model.name +
                       " has no experts (a dense model drops no tokens); leave it out");
    if (job.pad_to_capacity)
      throw InputError(fields.pad_to_capacity + ": model " + model.name +
                       " has no experts (a dense model has no expert capacity); leave it out");
  }
  if (fp8_recipe_given && job.precision != Precision::kFp8)
    throw InputError(fields.fp8_recipe + " applies to fp8 training only; give precision fp8 or leave it out");
}

}  // namespace parplan
