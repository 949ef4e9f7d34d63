// The job inputs only torchtitan has (torch.compile, the per-document
// attention mask, the compiled loss, Async TP's compile rule, the FSDP
// float8 all-gather): applied to a resolved job, each refused naming its
// flag or job-file field where the plan is not torchtitan's.
#pragma once

#include "src/cli/job_options.h"
#include "src/io/job_loader.h"

namespace parplan {

/// `loss_given`: the job names its loss kernel (--cross-entropy or the job
/// file's cross_entropy).
void apply_torchtitan_choices(const JobFlags& f, const JobRequest& request, bool loss_given,
                              ResolvedJob& out);

/// --hsdp-shard N or the job file's `config: hsdp_shard`: ZeRO-3 as FSDP2's
/// hybrid sharding, every model state sharded over N data-parallel ranks
/// (x cp: torchtitan's dp_shard_cp mesh) and replicated across dp / N; the
/// cost model's HSDP shard group (hpz_ranks under a PyTorch-FSDP job) is
/// N x cp ranks. torchtitan only; N divides dp and is less than it.
void apply_hsdp_shard(const JobFlags& f, const ResolvedJob& r, ParallelConfig& c);

/// plan --hsdp-shard N: the search keeps to ZeRO-3 plans of that HSDP shard
/// degree (SearchPins::hsdp_shard); PyTorch-FSDP jobs only.
void pin_hsdp_shard(const JobFlags& f, JobSpec& job);

}  // namespace parplan
