// MoE token dropping (capacity factor, padding to capacity) and the fp8
// scaling recipe: one range and one set of rules for job files, run files
// and flags, so each names its own field in the same words.
#pragma once

#include <string>

#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"

namespace parplan {

/// A capacity factor's range: below 1e-3 an expert keeps no token of any
/// real batch; above 1e3 it never drops one (the same as dropless).
inline constexpr double kMinCapacityFactor = 1e-3;
inline constexpr double kMaxCapacityFactor = 1e3;

/// "delayed" | "current"; throws InputError naming `field`.
Fp8Scaling parse_fp8_recipe(const std::string& text, const std::string& field);
const char* fp8_recipe_name(Fp8Scaling scaling);

/// Throws InputError naming `field` unless `factor` is a finite number in
/// [kMinCapacityFactor, kMaxCapacityFactor].
void check_capacity_factor(double factor, const std::string& field);

/// How an error names each input: a flag ("--moe-capacity-factor") or a
/// file's field ("job.yaml: field 'moe_capacity_factor'").
struct MoeFp8RecipeFields {
  std::string capacity_factor = "moe_capacity_factor";
  std::string pad_to_capacity = "moe_pad_to_capacity";
  std::string fp8_recipe = "fp8_recipe";
};

/// The rules between these inputs and the rest of the job: padding needs a
/// capacity factor (the capacity to pad to), both need a model with
/// experts, and an fp8 recipe (`fp8_recipe_given`) needs fp8 precision.
/// Throws InputError naming the field.
void check_moe_fp8_recipe(const ModelSpec& model, const JobSpec& job, bool fp8_recipe_given,
                          const MoeFp8RecipeFields& fields);

}  // namespace parplan
