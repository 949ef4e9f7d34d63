// Megatron-LM's --pipeline-model-parallel-layout text, read and written:
// "Et|(tt|)*30mL" is a stage of the embedding and one transformer layer,
// thirty stages of two layers, a stage of the MTP layer and the loss.
#pragma once

#include <string>

#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/pipeline_layout.h"

namespace parplan {

/// Longest layout text read (before its repeats are unrolled).
inline constexpr std::size_t kMaxPipelineLayoutChars = 4096;

/// Reads `text` over `pp` pipeline ranks as Megatron does
/// (PipelineParallelLayerLayout.parse_str_to_list and
/// validate_layer_layout): commas are cosmetic, "(...)*N" and "x*N" repeat,
/// "|" separates virtual stages, E / t / m / L are the embedding, a
/// transformer layer, an MTP layer and the loss. Checked as Megatron checks
/// it (stages a multiple of pp; E first and L last, once each; the model's
/// layer count of t; the model's MTP layer count of m, after every t) and as
/// parplan costs it (the MTP layers beside the loss in the last stage, every
/// rank at least one transformer layer, at most PipelineLayout::kMaxStages
/// stages). Throws InputError starting with `where` and saying what to fix.
PipelineLayout parse_pipeline_layout(const std::string& text, int pp, const ModelSpec& model,
                                     const std::string& where);

/// Lays `config` out by `layout` (vp and every rank's layers), refusing a pp
/// the layout's stages are not a multiple of, first/last stage layer counts
/// beside it, and (`vp_given`) a vp other than the layout's.
void lay_out_config(const PipelineLayout& layout, const std::string& where, bool vp_given,
                    ParallelConfig& config);

/// Reads `text` over config.pp ranks, records it in job.pipeline_layout and
/// lays `config` out by it (vp and every rank's layers). `vp_given`: the
/// config names vp too, which must then be the layout's stages over pp.
void apply_pipeline_layout_text(const std::string& text, const std::string& where, bool vp_given,
                                const ModelSpec& model, JobSpec& job, ParallelConfig& config);

/// The layout as Megatron's flag takes it, runs of equal stages folded
/// ("Et|(tt|)*30mL"); `mtp_layers` m's before the loss.
std::string pipeline_layout_text(const PipelineLayout& layout, int mtp_layers);

}  // namespace parplan
