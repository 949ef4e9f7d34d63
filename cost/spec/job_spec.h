// JobSpec: what the user asks for: a model on a cluster with a batch, and the
// dimensions they pin for the search.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "cost/spec/cluster_spec.h"
#include "cost/spec/parallel_config.h"
#include "cost/spec/pipeline_layout.h"

namespace parplan {

enum class Optimizer { kAdam, kSgd };

/// How the optimizer step runs over the local parameters: one fused kernel
/// per group of tensors (Megatron-LM's and torchtitan's AdamW), or one
/// PyTorch operator per update term with the gradient clipping's norm and
/// scale passes (Composer's DecoupledAdamW under llm-foundry;
/// cost/compute_time.h optimizer_step_s).
enum class OptimizerKernels { kFused, kPerOperator };

/// The dtype data parallelism reduces (and the gradient buffer keeps)
/// gradients in (--grad-reduce-dtype). kEngineDefault: Megatron-LM's fp32
/// main grads under bf16 with ZeRO <= 1, the model dtype otherwise
/// (cost/memory.h gradient_bytes_per_param).
enum class GradReduceDtype : std::uint8_t { kEngineDefault, kFp32, kBf16 };

/// When data parallelism reduces (reduce-scatters) the gradients of a step
/// of m micro-batches (--grad-sync); ZeRO-0/1/2 (ZeRO-3 reduces every
/// micro-batch in every engine parplan knows). Sources in
/// cost/grad_sync_schedule.h and docs/cost-model-engines.md.
enum class GradSyncSchedule : std::uint8_t {
  /// The rule of the engine that runs the config: ZeRO-2 every
  /// micro-batch (DeepSpeed) or, beside a pipeline, after the last backward
  /// (torchtitan, the only engine running it); ZeRO-0/1 once per step with
  /// the last micro-batch's backward.
  kEngineDefault,
  /// Every micro-batch, each reduction overlapped with its own backward
  /// (DeepSpeed ZeRO-2; torchtitan's FSDP2 without a pipeline).
  kEveryMicroBatch,
  /// Once per step, bucketed, overlapped with the last micro-batch's
  /// backward (Megatron-LM DDP / distributed optimizer with
  /// --overlap-grad-reduce; DeepSpeed ZeRO-1 without a pipeline).
  kLastMicroBatch,
  /// Once per step, after the stage's last backward, not overlapped with it
  /// (PyTorch pipelining's REDUCE_GRAD action under FSDP2: torchtitan + PP).
  kAfterLastBackward,
  /// torchtitan: kAfterLastBackward with a pipeline, kEveryMicroBatch
  /// without one.
  kTorchtitan,
  /// DeepSpeed (and Megatron-DeepSpeed): ZeRO-2 every micro-batch; ZeRO-1
  /// with the last micro-batch's backward; ZeRO-0, and any stage under
  /// its PipelineEngine (pp > 1), after the last backward.
  kDeepSpeed,
};

/// How the loss is computed, which sets the logits' footprint at the start
/// of the backward pass (--cross-entropy): a fused / vocab-parallel kernel
/// (Megatron) or an eager fp32-upcast cross-entropy (torchtitan), or
/// Transformer Engine's Triton kernel, which writes the gradient into the
/// 16-bit logits in place (Megatron's cross_entropy_fusion_impl "te"), or
/// the eager one compiled by torch.compile (torchtitan's compile.components
/// "loss").
enum class CrossEntropy : std::uint8_t { kFused, kEager, kTeInPlace, kCompiled };

/// What selective recomputation keeps (cost/memory.h): Megatron-LM's
/// (--recompute-granularity selective: everything but the attention core,
/// which is recomputed) or torchtitan's op-level policy (activation_
/// checkpoint.selective_ac_option "op": the outputs of every other matmul
/// and of the attention kernel; the rest is recomputed from the layer input).
enum class SelectiveCheckpoint : std::uint8_t { kAttentionCore, kTorchtitanOps };

/// The submodules Megatron-LM's selective recomputation redoes
/// (--recompute-modules; TransformerConfig.recompute_modules,
/// megatron/core/transformer/transformer_config.py l. 289-301 and 813-830 at
/// core_r0.13.0, default core_attn). core_attn checkpoints the attention
/// core; layernorm discards the output of the layer's separate norms (only
/// an MoE layer's pre-MLP norm is one: Transformer Engine fuses the others
/// into the next linear, IdentityOp in gpt_layer_specs.py); moe_act discards
/// the routed experts' activation output, FC2's input (moe/experts.py,
/// CheckpointWithoutOutput); mlp and moe checkpoint a dense layer's MLP and
/// an MoE layer's MoE block whole. Only under
/// SelectiveCheckpoint::kAttentionCore.
struct RecomputeModules {
  bool core_attn = true;
  bool layernorm = false;
  bool moe_act = false;
  /// A dense layer's whole MLP, checkpointed at its input (transformer_layer.py).
  bool mlp = false;
  /// An MoE layer's whole MoE block, router, dispatch, experts and combine,
  /// checkpointed at its input (moe/moe_layer.py).
  bool moe = false;
  /// Multi-latent attention's query/key/value up projections and their
  /// rope, output discarded once the attention kernel has read it and
  /// recomputed before its backward (multi_latent_attention.py,
  /// recompute_up_proj: CheckpointWithoutOutput).
  bool mla_up_proj = false;
  bool operator==(const RecomputeModules&) const = default;
};

/// How context parallelism exchanges keys and values: Megatron-LM /
/// Transformer Engine's ring (cp_comm_type "p2p", each step's send hidden
/// behind the previous block's attention), or PyTorch's experimental
/// context_parallel as torchtitan runs it (context_parallel_rotate_method
/// "allgather": all KV shards gathered beside the first local block, only
/// that block to hide behind; the KV gradients passed round a ring of fp32
/// all-to-alls, cost/pipeline_schedule.cpp).
enum class ContextParallelExchange : std::uint8_t { kRingOverlapped, kAllGatherKv };

/// The Transformer Engine release a Megatron / NeMo run uses, where its
/// context-parallel ring differs (cost/cp_merge_passes.h): the main branch,
/// or v1.8 (the NeMo 24.07 container's 1.8.0.dev0), which merged with more
/// copies (a zero-filled output, a correction for every block, contiguous
/// half K/V and concatenated dK/dV).
enum class TransformerEngineVersion : std::uint8_t { kMain, kV1_8 };

/// How an engine overlaps its sequence-parallel tp traffic with the linear
/// layers' GEMMs when asked (JobSpec::tp_comm_overlap): Transformer Engine's
/// userbuffers (Megatron-LM --tp-comm-overlap: every all-gather and
/// reduce-scatter, forward and backward, beside the GEMMs), or PyTorch's
/// micro-pipelined TP (Inductor's micro_pipeline_tp pass, torchtitan's
/// Async TP: each collective fused with the one matmul it feeds or comes
/// from, cost/micro_pipeline_tp.h).
enum class TpOverlapMechanism : std::uint8_t { kUserbuffers, kMicroPipeline };

/// What one ZeRO-3 collective call moves: DeepSpeed's buckets
/// (stage3_prefetch_bucket_size, reduce_bucket_size), or one FSDP unit per
/// transformer layer (torchtitan's FSDP2 fully_shard per block plus the
/// embedding and the norm + output; Megatron FSDP's TransformerLayer units
/// under optim_grads_params). Ring collectives pay (n - 1) step latencies
/// per call, so the count matters at 1000+ ranks.
enum class ShardUnit : std::uint8_t { kBuckets, kLayer };

/// Which engine's memory-bound passes a unit's gradient goes through before
/// its ZeRO-2/3 reduce-scatter (cost/sharded_grad_passes.h).
enum class ShardedGradPasses : std::uint8_t { kNone, kFsdp1, kDeepSpeedZero3 };

/// How a step's micro-batch gradients are summed before data parallelism
/// reduces them (cost/grad_accumulation.h): inside the weight-gradient GEMM
/// or in the sharded buffers each micro-batch reduces into (kFused:
/// Megatron-LM's gradient accumulation fusion, FSDP's and ZeRO-2/3's
/// per-micro-batch reductions), or in memory-bound passes over the stage's
/// 16-bit gradients (kDeepSpeed: ZeRO-0/1 under DeepSpeed, autograd's
/// in-place accumulation or the bf16 optimizer's fp32 copy).
enum class GradAccumulation : std::uint8_t { kFused, kDeepSpeed };

/// Transformer Engine's per-tensor fp8 scaling: delayed (the scale from an
/// amax history, the amax reduced inside the cast kernel; Megatron's
/// --fp8-recipe delayed, the default) or current (each tensor's own amax, a
/// pass over it before the cast; --fp8-recipe tensorwise, Megatron-Bridge's
/// FP8-CS).
enum class Fp8Scaling : std::uint8_t { kDelayed, kCurrent };

/// Measured MoE imbalance at one expert-parallel size: the busiest rank's
/// tokens over the mean, from routing statistics (--routing-stats).
struct MeasuredEpImbalance {
  int ep = 0;  ///< 0: unused entry
  double imbalance = 1.0;
};

/// The dimensions of the search the user fixed (flags such as --tp, or the
/// `constraints:` block of a job file); every other dimension is searched.
/// An empty field is free: the search tries every value its rules allow.
struct SearchPins {
  /// Tensor-parallel size (--tp, constraints: tp); free: the divisors of the
  /// GPUs up to one node's ranks. A pin may exceed a node.
  std::optional<int> tp;
  /// Pipeline-parallel size (--pp, constraints: pp); free: the divisors of
  /// the GPUs up to the model's layers.
  std::optional<int> pp;
  /// Virtual stages (model chunks) per pipeline rank (--vp, constraints: vp);
  /// free: 1 up to the search's cap on interleaving.
  std::optional<int> vp;
  /// Context-parallel size (--cp, constraints: cp); free: divisors up to 64.
  std::optional<int> cp;
  /// Data-parallel size (constraints: dp); free: whatever the GPUs leave
  /// after tp * cp * pp.
  std::optional<int> dp;
  /// Micro-batch size in sequences (--mbs, constraints: mbs); free: the
  /// divisors of the per-replica batch up to the search's largest.
  std::optional<int> mbs;
  /// ZeRO stage 0..3 (--zero, constraints: zero); free: 0..1 with pp > 1,
  /// else 0..3.
  std::optional<int> zero;
  /// Recomputation mode (--recompute, constraints: recompute); free: none,
  /// selective and full are all tried.
  std::optional<Recompute> recompute;
  /// Layers per model chunk that full recomputation recomputes
  /// (--recompute-layers); free: the fewest that make the config fit.
  std::optional<int> recompute_layers;
  /// Megatron sequence parallelism (--sp / --no-sp); free: on whenever tp > 1.
  std::optional<bool> sp;
  /// Fused (flash) attention (--attention flash|unfused); free: the
  /// cluster's default.
  std::optional<bool> flash_attention;
  /// ZeRO++ (--zeropp): true only ZeRO++ configs, false never; free: ZeRO-3
  /// is tried with and without it (quantized collectives only when allowed).
  std::optional<bool> zeropp;
  /// Hierarchical partitioning (--hierarchical-partition): as zeropp; free:
  /// tried only when the search allows the unreleased 3-level scheme.
  std::optional<bool> hierarchical_partition;
  /// HSDP shard degree in data-parallel ranks (plan --hsdp-shard, PyTorch
  /// FSDP engines): only ZeRO-3 plans sharding over that many dp ranks x cp,
  /// replicated across the rest; free: HSDP over 1 to 16 nodes is tried.
  std::optional<int> hsdp_shard;
  /// Expert-parallel size (--ep, constraints: ep; MoE); free: every divisor
  /// of the experts whose grid folds into a stage.
  std::optional<int> ep;
  /// Expert tensor-parallel size (--etp, constraints: etp; MoE); free: 1 or tp.
  std::optional<int> etp;
  /// The expert all-to-all (--a2a flat|hierarchical, config: a2a_hierarchical; MoE):
  /// hierarchical (DeepEP / HybridEP) or flat; free: flat, and hierarchical
  /// too where the expert-parallel group spans nodes.
  std::optional<bool> a2a_hierarchical;
  /// The all-to-all overlapped with the other micro-batch (--ep-overlap
  /// on|off, config: ep_overlap; MoE): on keeps only configs that run it
  /// (ep > 1, pp 1 or vp > 1, no full recomputation); free: on wherever
  /// allowed.
  std::optional<bool> ep_overlap;
  /// Layers of the first / last pipeline stage (--first-stage-layers,
  /// --last-stage-layers); free: the even or optimal uneven split.
  std::optional<int> first_stage_layers;
  std::optional<int> last_stage_layers;
};

/// The fused attention kernel the engine runs (cost/attention_kernels.h).
/// kProfile: the profile's flash_attention_efficiency, which a calibrated
/// profile fitted to its runs' kernel. kFlex: PyTorch's FlexAttention
/// (Triton, generated by torch.compile), which torchtitan main runs.
/// kTritonFlash: FlashAttention's 2022 Triton kernel (flash_attn_triton.py;
/// llm-foundry's `attn_impl: triton` on the triton-pre-mlir compiler).
enum class AttentionKernel { kProfile, kFlash2, kFlash3, kCudnn, kFlex, kTritonFlash };

struct JobSpec {
  /// Devices (ranks) in the job.
  int gpus = 0;
  /// Global batch in sequences and sequence length in tokens.
  int gbs = 0;
  int seq = 0;
  Precision precision = Precision::kBf16;
  Optimizer optimizer = Optimizer::kAdam;
  SearchPins pins;
  /// The layers of every virtual pipeline stage, when the job gives
  /// Megatron's custom layout (ParallelConfig::pipeline_layout marks the
  /// configs laid out by it).
  PipelineLayout pipeline_layout;
  /// Recipe inputs an engine fixes or the user sets (docs/cost-model-engines.md).
  GradReduceDtype grad_reduce = GradReduceDtype::kEngineDefault;
  GradSyncSchedule grad_sync = GradSyncSchedule::kEngineDefault;
  CrossEntropy cross_entropy = CrossEntropy::kFused;
  /// Under fp8, whether a linear layer saves the fp8 cast of its input for
  /// the weight gradient (Transformer Engine) or the 16-bit input itself
  /// (torchao's Float8Linear, torchtitan's fp8; cost/memory.h).
  bool fp8_saves_cast = true;
  /// Whether the linear layers are Transformer Engine's and the QKV and FC1
  /// ones its LayerNormLinear, the norm before them fused in (Megatron's TE
  /// layer spec). Under fp8 the norm then writes their fp8 input itself
  /// (delayed scaling) or its amax (current scaling), and every other
  /// Linear input and output gradient under current scaling takes an amax
  /// pass before its cast (cost/compute_time.cpp, layer_compute_times).
  bool te_layernorm_linear = false;
  Fp8Scaling fp8_scaling = Fp8Scaling::kDelayed;
  SelectiveCheckpoint selective_checkpoint = SelectiveCheckpoint::kAttentionCore;
  RecomputeModules recompute_modules;
  ContextParallelExchange cp_exchange = ContextParallelExchange::kRingOverlapped;
  TransformerEngineVersion transformer_engine = TransformerEngineVersion::kMain;
  /// Full recomputation's checkpointed layer inputs split over the tp group
  /// and gathered again before the layer is recomputed (DeepSpeed activation
  /// checkpointing's partition_activations, Megatron-DeepSpeed
  /// --partition-activations); only where sequence parallelism does not
  /// already shard them.
  bool partition_activations = false;
  /// An MoE model's pipeline stages pass their activations whole from every
  /// tp rank rather than split over tp (Megatron-DeepSpeed: DeepSpeed's
  /// PipelineEngine cannot partition the two tensors an MoE pipe passes, so
  /// ds_config turns pipe_partitioned off; megatron/model/gpt_model.py:
  /// 375-384 at 4efb479). Without sequence parallelism only: with it the
  /// activations are already split over tp.
  bool moe_pipe_unpartitioned = false;
  ShardUnit shard_unit = ShardUnit::kBuckets;
  /// Megatron-LM's precision-aware optimizer (--use-precision-aware-optimizer,
  /// Transformer Engine's FusedAdam): under bf16 the distributed optimizer
  /// keeps only the 16 low bits of each fp32 master weight (the high 16 are
  /// the bf16 parameter), 2 bytes instead of 4.
  bool precision_aware_optimizer = false;
  /// Megatron-LM's --tp-comm-overlap (Transformer Engine userbuffers) or
  /// torchtitan's Async TP: with sequence parallelism each tp all-gather and
  /// reduce-scatter is pipelined with a linear layer's GEMM beside it, so it
  /// costs only what outlasts that GEMM (cost/overlap.h), by the engine's
  /// mechanism. Applies to configs with tp > 1 and sp.
  bool tp_comm_overlap = false;
  TpOverlapMechanism tp_overlap_mechanism = TpOverlapMechanism::kUserbuffers;
  /// MoE: load of the busiest expert-parallel rank over the mean (max/mean,
  /// from routing statistics); 0 = the cost model's default for the
  /// model's balancing scheme (cost/moe.h).
  double moe_imbalance = 0.0;
  /// MoE: the same measured per expert-parallel size (every divisor of the
  /// expert count, contiguous placement); used when moe_imbalance is 0.
  /// A fixed array so a JobSpec copies without allocating.
  std::array<MeasuredEpImbalance, 64> measured_ep_imbalance{};
  /// MoE: expert capacity factor (tokens an expert takes over its fair
  /// share before dropping); 0 = dropless routing.
  double capacity_factor = 0.0;
  /// MoE with a capacity factor: every expert's input is padded to its
  /// capacity (Megatron's --moe-pad-expert-input-to-capacity), so each runs
  /// exactly capacity rows and the grouped GEMM's splits are fixed.
  bool pad_to_capacity = false;
  /// MoE: bytes of the expert-parallel all-to-all over the uncompressed
  /// volume (LSH-MoE style token compression, lossy; 1 = none).
  double a2a_compression = 1.0;
  /// MoE without a capacity factor, DeepSpeed-MoE's way (Megatron-DeepSpeed):
  /// the gate sets every expert's capacity to the busiest expert's count and
  /// pads all of them to it, so every rank runs and sends that many rows per
  /// expert (cost/moe.cpp, moe_load_factor).
  bool moe_pads_to_busiest_expert = false;
  /// MoE experts as torchtitan runs them: GroupedExperts calls
  /// torch._grouped_mm, one kernel over every local expert's rows, on bf16
  /// operands whatever the training precision (cost/moe.h, MoeShape).
  bool moe_grouped_mm = false;
  /// The routing probabilities weight the experts' activation (Megatron-Core
  /// 0.13 on: TEGroupedMLP's weighted_bias_swiglu_impl takes permuted_probs,
  /// and the token dispatchers' unpermute takes none; moe/experts.py and
  /// moe/token_dispatcher.py at core_r0.13.0, since ADLR/megatron-lm!2668
  /// "Memory efficient token permutation"), so no expert output is kept for
  /// the probabilities' gradient. Otherwise the combine weights each expert
  /// output by its probability and keeps the output (cost/moe.cpp).
  bool moe_probs_in_activation = false;
  /// ZeRO-3 as PyTorch's FSDP2 runs it (torchtitan): every unshard copies the
  /// all-gathered unit out of its gather buffer into the parameters on the
  /// compute stream (split_with_sizes_copy in FSDPParamGroup.wait_for_unshard,
  /// torch/distributed/_composable/fsdp/_fsdp_param_group.py), 16-bit
  /// parameters read and written once per unshard (cost/pipeline_schedule.cpp).
  /// DeepSpeed and Megatron FSDP gather into flat buffers the parameters are
  /// views of.
  bool fsdp_copy_out = false;
  /// The engine's passes over each unit's gradient before a ZeRO-2/3
  /// reduce-scatter, per micro-batch (cost/sharded_grad_passes.h): FSDP1's
  /// cast and division (Composer, llm-foundry: run-file fsdp_version 1),
  /// DeepSpeed ZeRO-3's bucket copy, concatenation and division.
  ShardedGradPasses sharded_grad_passes = ShardedGradPasses::kNone;
  /// How micro-batch gradients are summed (cost/grad_accumulation.h).
  GradAccumulation grad_accumulation = GradAccumulation::kFused;
  /// MoE: host time per kernel launch after the dropless dispatcher's
  /// per-layer host wait (cost/moe_host_sync.h); 0 = the wait is not priced.
  /// Off by default: no figure measured on a training host is in the
  /// catalog (docs/cost-model-moe.md, "Host synchronisation").
  double moe_host_launch_s = 0.0;
  /// Attention kernel the engine runs (Transformer Engine's cuDNN fused
  /// attention, PyTorch SDPA's flash path = FlashAttention-2, ...).
  AttentionKernel attention_kernel = AttentionKernel::kProfile;
  /// Element-wise kernels (norms, activation, residual adds, rope) fused as
  /// Megatron-LM/Transformer Engine or torch.compile run them; false: eager
  /// PyTorch, one HBM round trip per operator (cost/compute_time.cpp).
  bool fused_elementwise = true;
  /// Full recomputation runs through PyTorch's non-reentrant checkpoint
  /// (torch.utils.checkpoint with use_reentrant=False, torchtitan's and
  /// Composer's checkpoint wrappers), which stops recomputing once every
  /// tensor the backward reads is back (early stop, the default since
  /// PyTorch 2.1: pytorch/pytorch#96866), or through a compiled checkpoint
  /// region (AOTAutograd recomputes only what the backward reads). A
  /// layer's last linear (the FFN's output projection) saves its input
  /// before it computes, so its GEMM and the reduction of its output under
  /// tensor parallelism are not replayed; eager fp8 linears are autograd
  /// Functions that save after computing (cost/recompute_replay.h). False:
  /// Megatron-LM's and DeepSpeed's checkpoints replay the whole layer.
  bool checkpoint_early_stop = false;
  /// Eager PyTorch's RMSNorm composed of operators (x.float(), pow, mean,
  /// rsqrt, casts, weight: torchtitan's own RMSNorm before it took
  /// nn.RMSNorm, pytorch/torchtitan#985 of 2025-03-19); false: nn.RMSNorm as
  /// one fused kernel (F.rms_norm is aten::_fused_rms_norm on PyTorch 2.11,
  /// measured: calibration/h100-kernels/memory.csv). Only eager runs differ.
  bool composed_rms_norm = false;
  /// The query, key and value projections run as three matmuls over the
  /// same input, their input gradients summed (torchtitan's Llama before
  /// fused QKV became its default, v0.2.x and older); false: one fused
  /// matmul (Megatron-LM's linear_qkv, torchtitan main's wqkv).
  bool separate_qkv = false;
  /// The attention's queries, keys and values are unpadded before a
  /// variable-length flash kernel and its output padded back after it
  /// (llm-foundry's `attn_impl: flash`, flash-attn's bert_padding
  /// unpad_input / pad_input around flash_attn_varlen_func, even when no
  /// token is padding): a gather per input and a zero-filled scatter for the
  /// output, and their mirror images in the backward pass.
  bool unpadded_attention = false;
  /// Tokens per document of the packed training data, as attention sees
  /// them (documents of different lengths: the token-weighted mean length,
  /// E[L^2] / E[L]); 0: one document per sequence. torchtitan main masks
  /// attention per document (block-causal FlexAttention,
  /// torchtitan/models/common/config_utils.py:71-101 @ b5bcd76c), so a query
  /// attends only to the earlier tokens of its own document
  /// (cost/document_mask.h).
  double document_tokens = 0;
  OptimizerKernels optimizer_kernels = OptimizerKernels::kFused;
  /// fp8 runs all-gather the tp activations in fp8 and reduce-scatter them
  /// in 16 bits: torchao's Float8ColwiseParallel, Float8RowwiseParallel and
  /// PrepareFloat8ModuleInput cast before the forward gathers, and the
  /// backward's gathers take the gradient _NoopFwToFloat8BwDynamic cast
  /// (torchao/float8/float8_tensor_parallel.py), as torchtitan applies them
  /// with tensorwise Float8 (parallelize_llama.py @ 9dec370, lines 148-161).
  /// Transformer Engine under sequence parallelism the same way: its
  /// LayerNormLinear gathers the norm's fp8 output (TE 1.8
  /// module/layernorm_linear.py; TE 2.x gather_along_first_dim with the
  /// input quantizer), and a row-parallel Linear's backward casts its output
  /// gradient before it gathers it (module/base.py grad_output_preprocess:
  /// "FP8 case with gather"). Without sequence parallelism tp all-reduces
  /// in 16 bits.
  bool fp8_tp_all_gather = false;
  /// Sequence parallelism on the sequence dim of batch-first hidden states
  /// (torchtitan v0.2.x and older: DTensor Shard(1) on [b, s, h]): PyTorch's
  /// functional collectives copy the whole activation around each gather
  /// and scatter (cost/sequence_dim_copies.h). torchtitan main folds batch
  /// and sequence (pytorch/torchtitan#4121) and shards dim 0: false.
  bool sp_sequence_dim_copies = false;
  /// Mixed precision comes only from FSDP (or from autocast under DDP or on
  /// one device): with tp or pp > 1 and neither FSDP nor cp the engine trains
  /// in fp32, not as costed. torchtitan v0.2.x (maybe_enable_amp,
  /// torchtitan/distributed/utils.py:243-263 at v0.2.2); the engine rules
  /// refuse such plans.
  bool mixed_precision_needs_fsdp = false;
  /// ZeRO-3 / FSDP all-gathers the fp8-trained linear layers' weights in
  /// fp8 (1 byte), the embeddings, norms and output head in 16 bits:
  /// torchtitan's float8 enable_fsdp_float8_all_gather (torchao's
  /// WeightWithDynamicFloat8CastTensor casts each shard before FSDP2
  /// gathers it, torchao/float8/fsdp_utils.py). fp8 plans only.
  bool fsdp_fp8_all_gather = false;
  /// A gated FFN's gate and up projections as two matmuls the same way
  /// (torchtitan's w1, w3); false: one (Megatron-LM's linear_fc1).
  bool separate_gate_up = false;

  /// HBM a plan keeps free, beyond the cost model's own reservations:
  /// a fraction of usable HBM plus bytes (--memory-headroom).
  double memory_headroom_fraction = 0.0;
  double memory_headroom_bytes = 0.0;
  /// The HBM a plan may fill: usable HBM less the headroom.
  double memory_budget_bytes(double usable_hbm_bytes) const {
    return usable_hbm_bytes * (1.0 - memory_headroom_fraction) - memory_headroom_bytes;
  }

  /// Bytes of optimizer state per parameter beyond the 16-bit weights and
  /// gradients (ZeRO's K): fp32 master copy + Adam momentum + variance = 12.
  /// Adam: fp32 master, momentum and variance (12 bytes), or 10 with the
  /// precision-aware optimizer's 2-byte master remainders (ZeRO >= 1, not
  /// fp16: megatron/core/optimizer/distrib_optimizer.py:735-740 at
  /// core_r0.13.0). SGD: fp32 master and momentum.
  /// ZeRO as PyTorch's FSDP runs it (FSDP2: fsdp_copy_out; FSDP1: its
  /// gradient passes): mixed precision keeps the sharded parameters in fp32
  /// as the optimizer's master copy, and the gradients are freed between
  /// steps (zero_grad(set_to_none=True)) and reduce-scattered unit by unit
  /// during the backward (cost/stage_memory.cpp).
  bool pytorch_fsdp() const { return fsdp_copy_out || sharded_grad_passes == ShardedGradPasses::kFsdp1; }

  /// The dtype data parallelism reduces gradients in at ZeRO stage `zero`:
  /// the one given (--grad-reduce-dtype), else the engine's. DeepSpeed's
  /// ZeRO-1 optimizer keeps bf16 gradients and reduces them in that dtype
  /// (get_data_types: gradient accumulation in the model dtype once ZeRO is
  /// on; communication_data_type defaults to it); its BF16_Optimizer
  /// (bf16 without ZeRO) keeps and all-reduces fp32 ones, as Megatron-LM's
  /// main_grad (cost/memory.h gradient_bytes_per_param).
  GradReduceDtype grad_reduce_for(int zero) const {
    const bool deepspeed_zero1 = grad_reduce == GradReduceDtype::kEngineDefault &&
                                 grad_accumulation == GradAccumulation::kDeepSpeed && zero == 1;
    return deepspeed_zero1 ? GradReduceDtype::kBf16 : grad_reduce;
  }
  /// The ZeRO stage the optimizer states are sharded at: DeepSpeed under
  /// bf16 without ZeRO runs its BF16_Optimizer, which partitions the fp32
  /// master weights and Adam states over data parallelism as ZeRO-1 does
  /// and gathers the updated bf16 weights after the step
  /// (deepspeed/runtime/bf16_optimizer.py _setup_for_real_optimizer, step;
  /// cost/grad_accumulation.h).
  int optimizer_shard_stage(int zero) const {
    const bool bf16_optimizer =
        zero == 0 && grad_accumulation == GradAccumulation::kDeepSpeed && precision == Precision::kBf16;
    return bf16_optimizer ? 1 : zero;
  }
  double optimizer_state_bytes_per_param(int zero = 0) const {
    if (optimizer != Optimizer::kAdam) return 8.0;
    return precision_aware_optimizer && zero >= 1 && precision != Precision::kFp16 ? 10.0 : 12.0;
  }
};

}  // namespace parplan
