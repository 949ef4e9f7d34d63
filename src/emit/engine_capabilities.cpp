// The engines' capability tables. Each source is `path:line` (or a line
// range) at the commit named in the table's comment and revision string; a
// value marked "(parplan)" is a limit of the launch files parplan writes
// for that engine, not of the engine.
#include "src/emit/engine_capabilities.h"

#include <algorithm>

#include "src/io/input_error.h"

namespace parplan {
namespace {

// NVIDIA/Megatron-LM, branch core_r0.13.0 at 73a28a1078a8 (2025-08-12,
// core_v0.13.1 plus the version bump). EP all-to-all overlap
// (--overlap-moe-expert-parallel-comm) and --use-megatron-fsdp arrive in
// core_v0.14.0; they are not in this table.
constexpr CapabilitySource kMegatronSources[] = {
    {"tp, sp", "any tp; sp optional",
     "megatron/core/model_parallel_config.py:19,38; megatron/training/arguments.py:2243,1939"},
    {"cp", "yes; seq % (2 cp) == 0", "megatron/training/arguments.py:775-778"},
    {"pp, vp", "yes; interleaved",
     "megatron/core/model_parallel_config.py:27,30; megatron/training/arguments.py:2277-2280"},
    {"ep, etp", "any divisors",
     "megatron/core/model_parallel_config.py:55,58; megatron/training/arguments.py:2700-2703"},
    {"hierarchical all-to-all", "--moe-token-dispatcher-type flex --moe-enable-deepep",
     "megatron/core/transformer/moe/token_dispatcher.py:1133; megatron/training/arguments.py:2790-2795"},
    {"a2a overlap", "none (--moe-shared-expert-overlap overlaps shared experts only)",
     "megatron/training/arguments.py:2721; megatron/core/transformer/transformer_config.py:378"},
    {"zero 1", "--use-distributed-optimizer",
     "megatron/training/arguments.py:2348; megatron/core/optimizer/distrib_optimizer.py:79"},
    {"zero 2/3", "Megatron FSDP (--use-custom-fsdp, optim_grads[_params]); pp 1 only (parplan)",
     "megatron/training/arguments.py:2356-2361; megatron/core/distributed/custom_fsdp/"
     "fully_sharded_data_parallel.py:49"},
    {"ZeRO++, hierarchical partition", "none: sharding is no_shard/optim/optim_grads/optim_grads_params",
     "megatron/training/arguments.py:2360"},
    {"recompute",
     "selective (--recompute-modules core_attn, layernorm, moe_act, mlp, moe, mla_up_proj (MLA models); not "
     "layernorm/moe_act with "
     "fp8); full uniform/block with a layer count",
     "megatron/training/arguments.py:1733-1770; "
     "megatron/core/transformer/transformer_config.py:289-301,813-846"},
    {"uneven stages",
     "first/last stage counts; --pipeline-model-parallel-layout per virtual stage, no MTP in it",
     "megatron/core/transformer/transformer_config.py:53-59,873-925; megatron/training/arguments.py:497-518,"
     "2258-2266; megatron/core/transformer/pipeline_parallel_layer_layout.py:81-111"},
    {"overlap", "--overlap-grad-reduce, --overlap-param-gather, --tp-comm-overlap",
     "megatron/training/arguments.py:2295,2319,1811"},
    {"fp8", "--fp8-format, --fp8-recipe delayed, tensorwise, mxfp8 or blockwise (Transformer Engine)",
     "megatron/training/arguments.py:1179-1187"},
    {"MoE experts",
     "--moe-grouped-gemm (one grouped GEMM over the local experts, as costed): bf16 or fp8 only, so fp16 MoE "
     "plans are refused; MTP (--mtp-num-layers) with cp > 1 is refused in this release (allowed from "
     "core_v0.14.0); with tp > 1 only under sequence parallelism (MoELayer raises in training otherwise)",
     "megatron/training/arguments.py:804-805,1073-1075; megatron/core/transformer/moe/moe_layer.py:240-244"},
    {"MoE token dropping",
     "--moe-expert-capacity-factor; --moe-pad-expert-input-to-capacity (alltoall dispatcher; flex refuses "
     "it)",
     "megatron/training/arguments.py:2801-2806; "
     "megatron/core/transformer/transformer_config.py:723-727,743-755; "
     "megatron/core/transformer/moe/token_dispatcher.py:399-448"},
    {"gradient reduction dtype",
     "fp32 main grads under bf16 and fp8 (default) or --grad-reduce-in-bf16; 16-bit under fp16 or "
     "--accumulate-allreduce-grads-in-fp32. parplan writes the flag that gives the dtype the plan was costed "
     "with",
     "megatron/training/arguments.py:683-689,2204,2225; "
     "megatron/core/distributed/distributed_data_parallel_config.py:11"},
    {"precision-aware optimizer",
     "--use-precision-aware-optimizer: Adam with the distributed optimizer; bf16 master remainders (2 bytes)",
     "megatron/training/arguments.py:2932; megatron/core/optimizer/optimizer_config.py:64,194-200; "
     "megatron/core/optimizer/distrib_optimizer.py:735-740"},
    {"loss",
     "vocab-parallel cross-entropy; --cross-entropy-loss-fusion with --cross-entropy-fusion-impl native or "
     "te",
     "megatron/training/arguments.py:1897-1902"},
};

// deepspeedai/DeepSpeed, tag v0.17.0 (720787e79b55, 2025-06-02).
constexpr CapabilitySource kDeepSpeedSources[] = {
    {"tp, sp, cp, vp", "none in the plain DeepSpeed script (parplan writes no AutoTP or Ulysses model)",
     "deepspeed/runtime/tensor_parallel/config.py:45; deepspeed/sequence/layer.py:331"},
    {"pp", "PipelineModule, uniform split", "deepspeed/runtime/pipe/module.py:393-405"},
    {"zero 0-3", "zero_optimization.stage", "deepspeed/runtime/zero/config.py:91"},
    {"zero with pp", "stage <= 1 (ZeRO-2/3 incompatible with pipeline parallelism)",
     "deepspeed/runtime/pipe/engine.py:77-78"},
    {"hpZ, qwZ, qgZ", "zero_hpz_partition_size, zero_quantized_weights, zero_quantized_gradients",
     "deepspeed/runtime/zero/config.py:294,298,310"},
    {"hierarchical partition", "none released: hpZ is one secondary group (two levels)",
     "deepspeed/runtime/zero/config.py:294-297"},
    {"recompute", "full, every layer (PipelineModule activation_checkpoint_interval)",
     "deepspeed/runtime/pipe/module.py:117,223-226; "
     "deepspeed/runtime/activation_checkpointing/checkpointing.py:948"},
    {"overlap", "zero_optimization.overlap_comm (default on for stage 3)",
     "deepspeed/runtime/zero/config.py:134,351-353"},
    {"gradient reduction dtype",
     "communication_data_type fp32/bf16/fp16, written when `--grad-reduce-dtype` is given (without it the "
     "model dtype)",
     "deepspeed/runtime/config.py:253-267"},
    {"fp8", "none: precision is the fp16 or bf16 section", "deepspeed/runtime/config.py:161-172"},
    {"MoE, token dropping",
     "none in ds_config: capacity_factor and drop_tokens are arguments of deepspeed.moe.layer.MoE in the "
     "user's model code; parplan writes no MoE model for plain DeepSpeed (parplan)",
     "deepspeed/moe/layer.py:38-50"},
    {"optimizers",
     "AdamW from the config (parplan); SGD only by torch.optim name, and with ZeRO only with "
     "zero_allow_untested_optimizer",
     "deepspeed/runtime/engine.py:1530-1532,1341-1344; deepspeed/runtime/zero/utils.py:43-44"},
};

// deepspeedai/Megatron-DeepSpeed, main at 4efb479d5317 (2025-07-16); the
// DeepSpeed rows it inherits cite DeepSpeed v0.17.0.
constexpr CapabilitySource kMegatronDeepSpeedSources[] = {
    {"tp, sp", "yes", "megatron/arguments.py:1149,972"},
    {"cp, vp",
     "none: Ulysses (--ds-sequence-parallel-size) is a different split; DeepSpeed's pipeline has no "
     "virtual stages",
     "megatron/arguments.py:974,94-96; megatron/model/gpt_model.py:459-463"},
    {"pp",
     "DeepSpeed PipelineModule, partition_method type:transformer: partition_balanced over the layers (no "
     "flag; layers that do not divide over pp: the first layers mod pp stages hold one more)",
     "megatron/model/gpt_model.py:459-463; DeepSpeed v0.17.0 deepspeed/runtime/pipe/module.py:409-414, "
     "deepspeed/runtime/utils.py:583-622"},
    {"ep, etp",
     "--moe-expert-parallel-size; etp 1 or tp (--enable-expert-tensor-parallelism); --expert-interval always "
     "written (its default 2 would leave every other layer dense); --create-moe-param-group always written "
     "(DeepSpeed's ZeRO and bf16 optimizers assert the experts have their own param groups)",
     "megatron/arguments.py:1159,1151-1153,614,921; megatron/model/transformer.py:1650-1660; "
     "megatron/optimizer/__init__.py:79-81; DeepSpeed v0.17.0 "
     "deepspeed/runtime/zero/stage_1_and_2.py:647-649"},
    {"zero, ZeRO++",
     "as DeepSpeed (zero <= 1 with pp); hpZ and qgZ only with tp 1 (DeepSpeed forms their groups from global "
     "ranks, not the data-parallel group)",
     "DeepSpeed v0.17.0 deepspeed/runtime/pipe/engine.py:77-78, deepspeed/utils/groups.py:679-683, "
     "deepspeed/runtime/comm/coalesced_collectives.py:35-40"},
    {"overlap",
     "DeepSpeed's zero_optimization.overlap_comm; no --overlap-grad-reduce/--overlap-param-gather/"
     "--tp-comm-overlap (only --overlap-p2p-communication)",
     "megatron/arguments.py:1166-1169; DeepSpeed v0.17.0 deepspeed/runtime/zero/config.py:134"},
    {"recompute", "selective; full on every layer, in groups of a checkpoint interval (no block method)",
     "megatron/arguments.py:830-864; megatron/model/gpt_model.py:444-451"},
    {"partition activations",
     "--partition-activations: full recomputation's checkpoints split over tp (DeepSpeed checkpointing); "
     "parplan writes it with tp > 1 and no sp",
     "megatron/arguments.py:1526-1527; megatron/initialize.py:186-189"},
    {"gradient reduction dtype", "communication_data_type, written when `--grad-reduce-dtype` is given",
     "DeepSpeed v0.17.0 deepspeed/runtime/config.py:253-267"},
    {"fp8", "--fp8-e4m3 / --fp8-hybrid (Transformer Engine layers); parplan writes no fp8 plan (parplan)",
     "megatron/arguments.py:506-509,372-377"},
    {"MoE token dropping",
     "--moe-train-capacity-factor: always padded, DeepSpeed-MoE dispatches an experts x capacity tensor "
     "(DeepSpeed v0.17.0 deepspeed/moe/sharded_moe.py:161-170,609); no unpadded dropping",
     "megatron/arguments.py:910-915; megatron/model/transformer.py:1068-1083"},
    {"optimizers",
     "adam, sgd (--optimizer); SGD under ZeRO >= 1 needs zero_allow_untested_optimizer (DeepSpeed "
     "v0.17.0 deepspeed/runtime/engine.py:1341-1344)",
     "megatron/arguments.py:940-942; megatron/optimizer/__init__.py:106-110"},
};

// pytorch/torchtitan, main at b5bcd76c6 (2026-08-21), the Python-config
// release parplan emits for by default. Where v0.2.2 (73a0e69, the TOML
// target) is narrower, the flags keep its limit so a plan runs on both.
constexpr CapabilitySource kTorchtitanSources[] = {
    {"tp, sp", "tp with sequence parallelism (enable_sequence_parallel, on by default; parplan keeps it on)",
     "torchtitan/config/configs.py:166-170"},
    {"cp", "context_parallel_degree; seq % (2 tp cp) == 0",
     "torchtitan/config/configs.py:239; torchtitan/distributed/parallel_dims.py:664-671"},
    {"pp, vp",
     "pipeline_parallel_degree; 1F1B / Interleaved1F1B, 2 stages per rank by default (<= 2, parplan)",
     "torchtitan/config/configs.py:180,216; torchtitan/distributed/pipeline_parallel.py:242-263"},
    {"ep, etp",
     "expert_parallel_degree divides dp_shard*cp*tp; routed experts shard over ep only, so etp 1 with "
     "ep > 1 (v0.2.2 also allowed etp = tp)",
     "torchtitan/config/configs.py:282; torchtitan/distributed/parallel_dims.py:187-192; "
     "torchtitan/models/common/moe_sharding.py:29-46,208-218"},
    {"zero 0",
     "replicate only: FSDP2 with shard degree 1 (main); parplan keeps v0.2.2's 1-D DDP limit "
     "(llama3/infra/parallelize.py:151 there)",
     "torchtitan/models/llama3/parallelize.py:56-76"},
    {"zero 2/3, HSDP", "FSDP2 fully_shard (reshard_after_forward always/never), dp_shard/dp_replicate",
     "torchtitan/config/configs.py:122,133,145; torchtitan/distributed/fsdp.py:124-131"},
    {"zero 1, qwZ, qgZ, hierarchical partition",
     "none: FSDP2 reshards parameters or not, no optimizer-only "
     "sharding",
     "torchtitan/distributed/fsdp.py:112-135"},
    {"recompute", "selective (per-op) / full / none, every transformer block",
     "torchtitan/distributed/activation_checkpoint.py:152-163,166,185,332-337"},
    {"precision",
     "bf16 mixed_precision_param; reduce in fp32 (mixed_precision_reduce); v0.2.x mixes precision only "
     "under FSDP or cp, or by autocast without tp and pp (fp32 otherwise: refused)",
     "torchtitan/config/configs.py:94,102; v0.2.2 torchtitan/distributed/utils.py:243-263"},
    {"CUDA graphs",
     "on by default in main, refused with pp > 1 or the standard expert dispatcher; parplan writes "
     "training.disable_cuda_graphs (eager launches, as costed)",
     "torchtitan/config/configs.py:75; torchtitan/trainer.py:168-199"},
    {"uneven first/last stages",
     "fewer layers only: pipeline_parallel_first/last_stage_less_layers (default 1)",
     "torchtitan/config/configs.py:197-207; torchtitan/distributed/pipeline_parallel.py:215-216"},
    {"zero 2/3 with pp", "FSDP2 + PP (reshard_after_forward off with pp by default)",
     "torchtitan/distributed/fsdp.py:128-131"},
    {"loss", "eager cross_entropy on fp32-upcast logits (loss-parallel with tp)",
     "torchtitan/components/loss.py:41-61"},
    {"optimizers", "Adam, AdamW", "torchtitan/components/optimizer/optimizer.py:143-147"},
    {"tp comm overlap",
     "Async TP (Inductor's micro-pipelined TP): compile.enable_async_tensor_parallel (v0.2.2: "
     "parallelism.enable_async_tensor_parallel), only with compile.enable and \"model\" in "
     "compile.components",
     "torchtitan/config/configs.py:298-313; v0.2.2 torchtitan/config/job_config.py:357, "
     "torchtitan/distributed/tensor_parallel.py:16-25"},
    {"fp8",
     "torchao Float8Linear converter, dynamic scaling: rowwise, rowwise_with_gw_hp (v0.2.2 also tensorwise, "
     "its default, with fp8 FSDP all-gathers); no delayed scaling. parplan prices tensorwise and writes fp8 "
     "plans for v0.2.x only (--engine-version 0.2: model.converters quantize.linear.float8, output layer "
     "kept 16-bit); v0.2.x applies no Float8 tensor parallelism (it looks for the converter as \"float8\")",
     "torchtitan/components/quantization/float8.py:53-58; v0.2.2 torchtitan/config/job_config.py:731-738, "
     "components/quantization/float8.py:65-100,238, models/llama3/infra/parallelize.py:77"},
    {"MoE token dropping",
     "none: routing is dropless (non_blocking_capacity_factor only sizes HybridEP's receive buffer)",
     "torchtitan/distributed/deepep/hybridep.py:80-110"},
};

constexpr EngineCapabilities kMegatron{Engine::kMegatron,
                                       "megatron",
                                       "Megatron-LM core_r0.13.0 at 73a28a1",
                                       /*tp*/ true,
                                       /*cp*/ true,
                                       /*pp*/ true,
                                       /*ep*/ true,
                                       /*sp*/ true,
                                       /*sp_required*/ false,
                                       /*max_vp*/ 0,
                                       /*etp_any*/ true,
                                       /*a2a_hierarchical*/ true,
                                       /*ep_overlap*/ false,
                                       /*zero*/ {true, true, true, true},
                                       /*max_zero_with_pp*/ 1,
                                       /*zero0_only_1d*/ false,
                                       /*hpz*/ false,
                                       /*qwz*/ false,
                                       /*qgz*/ false,
                                       /*hierarchical_partition*/ false,
                                       /*selective*/ true,
                                       /*full*/ true,
                                       /*partial*/ true,
                                       /*uneven_first_last*/ true,
                                       /*custom_split*/ false,
                                       /*overlap_grad_reduce*/ true,
                                       /*overlap_param_gather*/ true,
                                       /*tp_comm_overlap*/ true,
                                       /*fp8*/ true,
                                       /*fp16*/ true,
                                       /*grad_reduce_bf16*/ true,
                                       /*moe*/ true,
                                       /*sgd*/ true,
                                       kMegatronSources,
                                       /*uneven_fewer_only*/ false,
                                       /*etp_one_with_ep*/ false,
                                       /*precision_aware_optimizer*/ true,
                                       /*moe_drop_unpadded*/ true,
                                       /*moe_drop_padded*/ true,
                                       /*pipeline_layout*/ true};

constexpr EngineCapabilities kDeepSpeed{Engine::kDeepSpeed,
                                        "deepspeed",
                                        "DeepSpeed v0.17.0",
                                        false,
                                        false,
                                        true,
                                        false,
                                        false,
                                        false,
                                        1,
                                        false,
                                        false,
                                        false,
                                        {true, true, true, true},
                                        1,
                                        false,
                                        true,
                                        true,
                                        true,
                                        false,
                                        false,
                                        true,
                                        false,
                                        false,
                                        false,
                                        true,
                                        false,
                                        false,
                                        false,
                                        true,
                                        true,
                                        false,
                                        false,
                                        kDeepSpeedSources,
                                        /*uneven_fewer_only*/ false};

constexpr EngineCapabilities kMegatronDeepSpeed{Engine::kMegatronDeepSpeed,
                                                "megatron-deepspeed",
                                                "Megatron-DeepSpeed main at 4efb479",
                                                true,
                                                false,
                                                true,
                                                true,
                                                true,
                                                false,
                                                1,
                                                false,
                                                false,
                                                false,
                                                {true, true, true, true},
                                                1,
                                                false,
                                                true,
                                                true,
                                                true,
                                                false,
                                                true,
                                                true,
                                                false,
                                                false,
                                                false,
                                                true,
                                                false,
                                                false,
                                                false,
                                                true,
                                                true,
                                                true,
                                                true,
                                                kMegatronDeepSpeedSources,
                                                /*uneven_fewer_only*/ false,
                                                /*etp_one_with_ep*/ false,
                                                /*precision_aware_optimizer*/ false,
                                                /*moe_drop_unpadded*/ false,
                                                /*moe_drop_padded*/ true,
                                                /*pipeline_layout*/ false,
                                                /*deepspeed_type_split*/ true};

constexpr EngineCapabilities kTorchtitan{Engine::kTorchtitan,
                                         "torchtitan",
                                         "torchtitan main at b5bcd76",
                                         true,
                                         true,
                                         true,
                                         true,
                                         true,
                                         true,
                                         2,
                                         false,
                                         false,
                                         false,
                                         {true, false, true, true},
                                         3,
                                         true,
                                         true,
                                         false,
                                         false,
                                         false,
                                         true,
                                         true,
                                         false,
                                         true,  // uneven first/last stages
                                         false,
                                         /*overlap_grad_reduce*/ true,
                                         /*overlap_param_gather*/ false,
                                         /*tp_comm_overlap*/ true,
                                         /*fp8*/ true,
                                         false,
                                         false,
                                         true,
                                         false,
                                         kTorchtitanSources,
                                         /*uneven_fewer_only*/ true,
                                         /*etp_one_with_ep*/ true};

}  // namespace

const EngineCapabilities& engine_capabilities(Engine engine) {
  switch (engine) {
    case Engine::kDeepSpeed:
      return kDeepSpeed;
    case Engine::kMegatronDeepSpeed:
      return kMegatronDeepSpeed;
    case Engine::kTorchtitan:
      return kTorchtitan;
    case Engine::kMegatron:
      break;
  }
  return kMegatron;
}

const char* capability_problem(const EngineCapabilities& e, const ModelSpec& model, const JobSpec& job,
                               const ParallelConfig& c) {
  if (c.tp > 1 && !e.tp) return "no tensor parallelism";
  if (c.sp && !e.sp) return "no sequence parallelism";
  if (c.tp > 1 && e.sp_required && !c.sp) return "tensor parallelism always runs with sequence parallelism";
  if (c.cp > 1 && !e.cp) return "no context parallelism";
  // Megatron's local attention asserts cp == 1 and Transformer Engine turns
  // unfused attention off under CP; torch's context_parallel replaces only
  // the fused SDPA kernels (engine_rules.cpp cites the lines).
  if (c.cp > 1 && !c.flash_attention) return "context parallelism needs fused (flash) attention";
  if (!c.flash_attention && e.engine == Engine::kTorchtitan)
    return "no unfused attention (FlexAttention or SDPA's fused kernels)";
  if (c.pp > 1 && !e.pp) return "no pipeline parallelism";
  if (e.max_vp > 0 && c.vp > e.max_vp) return "no interleaved schedule with this many model chunks";
  if (model.is_moe() && !e.moe) return "no MoE layers";
  if (c.ep > 1 && !e.ep) return "no expert parallelism";
  if (!e.etp_any && c.etp != 1 && c.etp != c.tp) return "expert tensor parallelism is 1 or tp";
  if (e.etp_one_with_ep && c.ep > 1 && c.etp != 1)
    return "expert tensor parallelism is 1 with expert parallelism";
  if (c.a2a_hierarchical && !e.a2a_hierarchical) return "no hierarchical all-to-all";
  if (c.ep_overlap && !e.ep_overlap) return "no overlapped all-to-all";
  if (c.zero < 0 || c.zero > 3 || !e.zero[c.zero]) return "no such ZeRO stage";
  if (c.pp > 1 && c.zero > e.max_zero_with_pp) return "this ZeRO stage cannot run with pipeline parallelism";
  if (e.zero0_only_1d && c.zero == 0 && c.dp > 1 && c.tp * c.cp * c.pp > 1)
    return "plain data parallelism (DDP) only as 1-D parallelism";
  if (c.hpz_ranks > 1 && !e.hpz) return "no hpZ / HSDP";
  // PyTorch FSDP runs hpZ as HSDP, DeepSpeed as a secondary weight copy
  // beside the full partition (cost/step_internal.h, hsdp_shard_ranks): a
  // plan costed as one is not the other's.
  if (c.hpz_ranks > 1 && c.zero >= 3 && !c.hierarchical_partition &&
      job.pytorch_fsdp() != (e.engine == Engine::kTorchtitan))
    return job.pytorch_fsdp()
               ? "hpZ costed as PyTorch FSDP's HSDP, not DeepSpeed's secondary weight partition"
               : "hpZ costed as DeepSpeed's secondary weight partition; torchtitan runs HSDP "
                 "(plan with --engine torchtitan)";
  if (c.qwz && !e.qwz) return "no quantized weight all-gather (qwZ)";
  if (c.qgz && !e.qgz) return "no quantized gradient reduction (qgZ)";
  if (c.hierarchical_partition && !e.hierarchical_partition) return "no hierarchical partition";
  if (c.recompute == Recompute::kSelective && !e.recompute_selective) return "no selective recomputation";
  if (c.recompute == Recompute::kFull && !e.recompute_full) return "no full recomputation";
  if (c.recompute == Recompute::kFull && !e.recompute_partial && c.recompute_layers > 0 && c.pp > 0 &&
      c.vp > 0 && c.recompute_layers < model.layers / (c.pp * c.vp))
    return "full recomputation covers every layer";
  if ((c.first_stage_layers > 0 || c.last_stage_layers > 0) && !e.uneven_first_last)
    return "no first/last stage layer counts";
  if ((c.first_stage_layers > 0 || c.last_stage_layers > 0) && e.uneven_fewer_only) {
    const int first = c.first_stage_layers, last = c.last_stage_layers;
    const int others = c.pp - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
    const int middle = others > 0 ? (model.layers - first - last) / others : 0;
    if (others > 0 && ((first > 0 && first > middle) || (last > 0 && last > middle)))
      return "first/last stages may only hold fewer layers than the middle ones";
  }
  if (c.pipeline_layout && !e.pipeline_layout) return "no custom pipeline layout";
  if (c.pipeline_layout && model.mtp_layers > 0) return "no MTP layer in a custom pipeline layout";
  if (c.custom_split() && !c.pipeline_layout && !e.custom_split &&
      !(e.deepspeed_type_split && is_megatron_deepspeed_split(model, c))) {
    // An arbitrary split with equal middle stages is a first/last split.
    bool first_last = e.uneven_first_last && c.pp <= ParallelConfig::kMaxSplitStages;
    for (int s = 2; first_last && s + 1 < c.pp; ++s) first_last = c.stage_split[s] == c.stage_split[1];
    if (!first_last) return "no per-stage layer counts";
  }
  if (job.grad_reduce == GradReduceDtype::kBf16 && !e.grad_reduce_bf16) return "no bf16 gradient reduction";
  if (job.precision == Precision::kFp8 && !e.fp8) return "no fp8";
  if (job.precision == Precision::kFp16 && !e.fp16) return "no fp16";
  if (job.optimizer == Optimizer::kSgd && !e.sgd) return "no SGD";
  if (job.tp_comm_overlap && !e.tp_comm_overlap) return "no tp communication overlap";
  // torchtitan raises unless the model is compiled (Async TP is an Inductor pass).
  if (job.tp_comm_overlap && e.engine == Engine::kTorchtitan && !job.fused_elementwise)
    return "Async TP (tp communication overlap) only under torch.compile";
  if (const char* problem = token_drop_problem(e, model, job)) return problem;
  // TransformerConfig.__post_init__: "Flex token dispatcher does not support
  // moe_pad_expert_input_to_capacity" (transformer_config.py:723-727 at 73a28a1).
  if (job.capacity_factor > 0 && job.pad_to_capacity && c.a2a_hierarchical)
    return "the hierarchical all-to-all (flex dispatcher) cannot pad experts to capacity";
  if (job.precision_aware_optimizer) {
    if (!e.precision_aware_optimizer) return "no precision-aware optimizer";
    if (job.optimizer != Optimizer::kAdam) return "the precision-aware optimizer is Adam only";
    // parplan models it beside the distributed optimizer (Megatron FSDP
    // drops its fp32 weights instead, training.py:1115-1116).
    if (c.zero != 1) return "the precision-aware optimizer with the distributed optimizer (zero 1) only";
  }
  return nullptr;
}

const char* token_drop_problem(const EngineCapabilities& e, const ModelSpec& model, const JobSpec& job) {
  if (!model.is_moe() || job.capacity_factor <= 0) return nullptr;
  if (job.pad_to_capacity && !e.moe_drop_padded) return "no MoE token dropping (routing is dropless)";
  if (!job.pad_to_capacity && !e.moe_drop_unpadded)
    return e.moe_drop_padded ? "token dropping always pads every expert to its capacity"
                             : "no MoE token dropping (routing is dropless)";
  return nullptr;
}

EngineSelection parse_engine_selection(const std::string& name, const char* flag) {
  EngineSelection s;
  if (name.empty() || name == "any") return s;
  s.any = false;
  s.count = 1;
  for (Engine e : {Engine::kMegatron, Engine::kDeepSpeed, Engine::kMegatronDeepSpeed, Engine::kTorchtitan}) {
    if (name == engine_capabilities(e).name) {
      s.engines[0] = e;
      return s;
    }
  }
  throw InputError(std::string(flag) + ": unknown engine '" + name +
                   "'; choose one of megatron, deepspeed, megatron-deepspeed, torchtitan, any.");
}

namespace {
// The stage counts of DeepSpeed's type partition: the first layers % pp
// stages one layer more than the others (see the header; what the dynamic
// program gives for 0/1 weights, checked against it in
// tests/megatron_deepspeed_split_test.cpp). False where pp has more
// stages than a split holds or more than the layers.
bool deepspeed_type_counts(int layers, int pp, std::uint16_t* counts) {
  if (pp < 2 || pp > ParallelConfig::kMaxSplitStages || layers < pp) return false;
  for (int s = 0; s < pp; ++s)
    counts[s] = static_cast<std::uint16_t>(layers / pp + (s < layers % pp ? 1 : 0));
  return true;
}
}  // namespace

bool apply_megatron_deepspeed_split(const ModelSpec& model, ParallelConfig& config) {
  if (config.pp < 2 || model.layers % config.pp == 0) return true;
  if (config.vp != 1) return false;
  std::uint16_t counts[ParallelConfig::kMaxSplitStages];
  if (!deepspeed_type_counts(model.layers, config.pp, counts)) return false;
  config.stage_split = {};
  for (int s = 0; s < config.pp; ++s) config.stage_split[s] = counts[s];
  config.first_stage_layers = config.last_stage_layers = 0;
  return true;
}

std::string engine_layer_split(const std::string& engine, const ModelSpec& model, ParallelConfig& config) {
  if (engine != "megatron-deepspeed" || config.custom_split() || config.first_stage_layers > 0 ||
      config.last_stage_layers > 0 || config.pp > model.layers ||
      apply_megatron_deepspeed_split(model, config))
    return "";
  if (config.vp != 1) return "";  // refused as interleaving the engine has not
  return "Megatron-DeepSpeed splits the " + std::to_string(model.layers) + " layers unevenly over pp " +
         std::to_string(config.pp) + " (DeepSpeed's partition); parplan costs such a split over at most " +
         std::to_string(ParallelConfig::kMaxSplitStages) + " stages: give a pp that divides the layers";
}

bool is_megatron_deepspeed_split(const ModelSpec& model, const ParallelConfig& config) {
  std::uint16_t counts[ParallelConfig::kMaxSplitStages];
  if (config.vp != 1 || !deepspeed_type_counts(model.layers, config.pp, counts)) return false;
  for (int s = 0; s < config.pp; ++s)
    if (config.stage_split[s] != counts[s]) return false;
  return true;
}

}  // namespace parplan
