// Megatron-LM's custom pipeline layout (--pipeline-model-parallel-layout;
// megatron/core/transformer/pipeline_parallel_layer_layout.py): how many
// transformer layers each virtual pipeline stage holds, when they differ
// from stage to stage (DeepSeek-V3's "Et|(tt|)*30mL": the embedding beside
// one layer, thirty stages of two, the MTP module and the loss alone).
#pragma once

#include <array>
#include <cstdint>

namespace parplan {

/// Virtual stage i runs on pipeline rank i % pp as that rank's model chunk
/// i / pp (Megatron's order, PipelineParallelLayerLayout.__init__). The
/// embedding opens stage 0; the loss, and the multi-token-prediction modules
/// of a model that has them, close the last one (the only places parplan
/// accepts them: src/io/pipeline_layout_text.h).
struct PipelineLayout {
  static constexpr int kMaxStages = 128;
  /// Virtual stages (pp * vp); 0 when the job gives no layout.
  int stages = 0;
  std::array<std::uint8_t, kMaxStages> decoder_layers{};
  bool given() const { return stages > 0; }
  bool operator==(const PipelineLayout&) const = default;
};

}  // namespace parplan
