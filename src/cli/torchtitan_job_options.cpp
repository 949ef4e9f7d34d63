#include "src/cli/torchtitan_job_options.h"

#include "src/cli/job_input_name.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/input_error.h"

namespace parplan {

namespace {
bool torchtitan_only(const ResolvedJob& out) {
  const EngineSelection engines = parse_engine_selection(out.engine);
  return !engines.any && engines.engines[0] == Engine::kTorchtitan;
}

// torchtitan's compile switch: the only engine here that runs eager
// element-wise kernels unless asked (Megatron-LM and DeepSpeed fuse theirs).
void apply_torch_compile(const JobFlags& f, const JobRequest& request, ResolvedJob& out) {
  const bool flag_given = !f.torch_compile.empty();
  if (!flag_given && !request.torch_compile) return;
  const std::string name = input_name(f, flag_given, "--torch-compile", "torch_compile");
  if (flag_given && f.torch_compile != "on" && f.torch_compile != "off")
    throw InputError("--torch-compile must be on or off (got '" + f.torch_compile + "')");
  const bool compile = flag_given ? f.torch_compile == "on" : *request.torch_compile;
  if (!torchtitan_only(out))
    throw InputError(name + " is torchtitan's (Megatron-LM and DeepSpeed fuse their kernels either way); " +
                     "use it with --engine torchtitan or --emit torchtitan");
  out.job.fused_elementwise = compile;
}

// torchtitan main's attention masks per document (block_causal FlexAttention
// for every language model); the other engines attend over the whole packed
// sequence, so the document length is torchtitan's alone.
void apply_document_tokens(const JobFlags& f, const JobRequest& request, ResolvedJob& out) {
  const bool flag_given = f.document_tokens.has_value();
  if (!flag_given && !request.document_tokens) return;
  const std::string name = input_name(f, flag_given, "--document-tokens", "document_tokens");
  if (!torchtitan_only(out))
    throw InputError(name +
                     " is torchtitan main's per-document attention mask (Megatron-LM and DeepSpeed attend "
                     "over the whole packed sequence); use it with --engine torchtitan or --emit torchtitan");
  out.job.document_tokens = flag_given ? *f.document_tokens : *request.document_tokens;
}

// torchtitan compiles the loss with the model (compile.components defaults
// to ["model", "loss"], torchtitan/config/configs.py @ b5bcd76c, and the
// launch files name both): with torch.compile on a torchtitan plan runs the
// compiled cross-entropy unless the job names another loss.
void apply_torchtitan_loss(const JobFlags& f, bool loss_given, ResolvedJob& out) {
  const bool compiled_titan = torchtitan_only(out) && out.job.fused_elementwise;
  if (!loss_given) {
    if (compiled_titan) out.job.cross_entropy = CrossEntropy::kCompiled;
    return;
  }
  // Transformer Engine's in-place loss is Megatron-LM's switch
  // (--cross-entropy-fusion-impl te): another engine's plan would not run as
  // costed, whatever its config (under any, that engine is not searched).
  const EngineSelection engines = parse_engine_selection(out.engine);
  if (out.job.cross_entropy == CrossEntropy::kTeInPlace && !engines.any &&
      engines.engines[0] != Engine::kMegatron)
    throw InputError(input_name(f, !f.cross_entropy.empty(), "--cross-entropy", "cross_entropy") +
                     " te is Transformer Engine's in-place cross-entropy, a Megatron-LM option; use it with "
                     "--engine megatron or choose fused or eager");
  if (out.job.cross_entropy == CrossEntropy::kCompiled && !compiled_titan)
    throw InputError(input_name(f, !f.cross_entropy.empty(), "--cross-entropy", "cross_entropy") +
                     " compiled is torchtitan's loss under torch.compile; use it with --engine torchtitan "
                     "(and --torch-compile on) or choose eager");
}

// torchtitan's Async TP is an Inductor pass: torchtitan raises unless the
// model is compiled (torchtitan/config/configs.py:307-313 @ b5bcd76c).
void check_async_tp_compiled(const JobFlags& f, const ResolvedJob& out) {
  if (!torchtitan_only(out) || !out.job.tp_comm_overlap || out.job.fused_elementwise) return;
  throw InputError(
      input_name(f, f.tp_comm_overlap, "--tp-comm-overlap", "tp_comm_overlap") +
      " under torchtitan is Async TP, which runs only compiled; use --torch-compile on (the default; "
      "job key torch_compile: true) or drop it");
}

// torchtitan's float8 enable_fsdp_float8_all_gather (JobSpec::
// fsdp_fp8_all_gather): FSDP2 gathers the Float8 linears' weights in fp8;
// it applies to the fp8 plans that shard with ZeRO-3.
void apply_fsdp_float8_all_gather(const JobFlags& f, const JobRequest& request, ResolvedJob& out) {
  const bool on = f.fsdp_float8_all_gather || request.fsdp_float8_all_gather.value_or(false);
  if (!on) return;
  const std::string name =
      input_name(f, f.fsdp_float8_all_gather, "--fsdp-float8-all-gather", "fsdp_float8_all_gather");
  if (!torchtitan_only(out))
    throw InputError(name + " is torchtitan's float8 option; use it with --engine torchtitan");
  if (out.job.precision != Precision::kFp8)
    throw InputError(name + " gathers Float8 weights; use it with --precision fp8");
  out.job.fsdp_fp8_all_gather = true;
}
}  // namespace

void apply_torchtitan_choices(const JobFlags& f, const JobRequest& request, bool loss_given,
                              ResolvedJob& out) {
  apply_torch_compile(f, request, out);
  apply_document_tokens(f, request, out);
  apply_torchtitan_loss(f, loss_given, out);
  check_async_tp_compiled(f, out);
  apply_fsdp_float8_all_gather(f, request, out);
}

void pin_hsdp_shard(const JobFlags& f, JobSpec& job) {
  if (!f.hsdp_shard) return;
  if (!job.pytorch_fsdp())
    throw InputError(
        "--hsdp-shard is torchtitan's hybrid sharding (FSDP2 over a replicate x shard mesh); "
        "use it with --engine torchtitan (DeepSpeed's hpZ is --zeropp)");
  if (f.zeropp || f.hierarchical_partition)
    throw InputError("--hsdp-shard and --zeropp or --hierarchical-partition are alternatives; give one");
  if (f.zero && *f.zero != 3)
    throw InputError("--hsdp-shard runs ZeRO stage 3 (FSDP2 resharding after forward); drop --zero " +
                     std::to_string(*f.zero) + " or give --zero 3");
  // dp is a multiple of the shard degree with at least two replicas.
  if (job.gpus % *f.hsdp_shard != 0 || 2 * static_cast<long long>(*f.hsdp_shard) > job.gpus)
    throw InputError("--hsdp-shard " + std::to_string(*f.hsdp_shard) + " must divide the " +
                     std::to_string(job.gpus) + " GPUs and leave at least two replicas (at most " +
                     std::to_string(job.gpus / 2) + ")");
  job.pins.zero = 3;
  job.pins.hsdp_shard = f.hsdp_shard;
}

void apply_hsdp_shard(const JobFlags& f, const ResolvedJob& r, ParallelConfig& c) {
  const std::optional<int> shard = f.hsdp_shard ? f.hsdp_shard : r.file_hsdp_shard;
  if (!shard) return;
  const std::string name = input_name(f, f.hsdp_shard.has_value(), "--hsdp-shard", "config.hsdp_shard");
  if (f.zeropp || f.hpz || f.hierarchical_partition)
    throw InputError(name + " and --zeropp, --hpz or --hierarchical-partition are alternatives; give one");
  if (!torchtitan_only(r))
    throw InputError(name +
                     " is torchtitan's hybrid sharding (FSDP2 over a replicate x shard mesh); use it " +
                     "with --engine torchtitan (DeepSpeed's hpZ is --hpz)");
  if (f.zero && *f.zero != 3)
    throw InputError(name + " runs ZeRO stage 3 (FSDP2 resharding after forward); drop --zero " +
                     std::to_string(*f.zero) + " or give --zero 3");
  if (c.dp % *shard != 0 || *shard >= c.dp)
    throw InputError(name + " " + std::to_string(*shard) + " must divide dp (" + std::to_string(c.dp) +
                     ") and be less than it (dp itself is plain FSDP: drop it)");
  c.zero = 3;
  c.hierarchical_partition = false;
  c.qwz = c.qgz = false;
  c.hpz_ranks = *shard * c.cp;
}

}  // namespace parplan
