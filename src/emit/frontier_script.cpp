// job.sbatch on Frontier, as OLCF's "PyTorch on Frontier" guide writes it
// (https://docs.olcf.ornl.gov/software/analytics/pytorch_frontier.html; read at
// olcf/olcf-user-docs software/analytics/pytorch_frontier.rst @ 2745903,
// 2026-07-22): the guide's modules, LD_LIBRARY_PATH and Python environment,
// the RCCL/libfabric settings it lists, one srun task per GCD (7 cores, the
// closest GPU), no torchrun, ranks from Slurm, a private MIOpen cache per task.
#include <sstream>

#include "src/emit/script_parts.h"

namespace parplan::emit_detail {

std::string frontier_script(const ScriptContext& x) {
  const Program program = program_for(x);
  const Layout& layout = x.layout;
  std::ostringstream s;
  s << sbatch_head(x, true);
  s << "# Modules, environment and srun layout of OLCF's \"PyTorch on Frontier\" guide:\n"
    << "# https://docs.olcf.ornl.gov/software/analytics/pytorch_frontier.html\n";
  s << "set -euo pipefail\n" << dir_line(x.final_dir) << "\n";
  Program with_env = program;
  // The guide's module list ("Load modules" of its batch script); pin the
  // versions it names (PrgEnv-gnu/8.7.0 cpe/26.03 rocm/7.1.1 at the revision read) or your own.
  with_env.user_block.push_back(
      defaulted("FRONTIER_MODULES", "PrgEnv-gnu cpe rocm rccl-net-plugin craype-accel-amd-gfx90a"));
  // The guide activates a conda environment (module miniforge3; conda activate
  // /path/to/my_env); any command that puts your PyTorch on PATH works.
  with_env.user_block.push_back(
      "# PYTHON_ENV_ACTIVATE: the command that activates your PyTorch environment (the guide: conda\n"
      "# activate /path/to/my_env after module load miniforge3); empty: it is active already.");
  with_env.user_block.push_back(defaulted("PYTHON_ENV_ACTIVATE", ""));
  s << user_block(with_env) << "\n";
  s << "if command -v module >/dev/null 2>&1; then\n"
    << "  set +u  # module scripts read unset variables\n"
    << "  # shellcheck disable=SC2086\n  module load $FRONTIER_MODULES\n  set -u\nfi\n";
  s << "# The guide: a non-default CPE needs its libraries first on the path.\n";
  s << "export LD_LIBRARY_PATH=\"${CRAY_LD_LIBRARY_PATH:-}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"\n";
  s << "if [ -n \"$PYTHON_ENV_ACTIVATE\" ]; then\n  set +u\n  eval \"$PYTHON_ENV_ACTIVATE\"\n  set "
       "-u\nfi\n\n";
  s << "# Rendezvous on the first node of the allocation (the guide: MASTER_PORT 3442).\n";
  s << "export MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"\n";
  s << "export MASTER_PORT=3442\n";
  s << "# RCCL over Slingshot: the settings the guide lists (\"RCCL Network Plugin\", HPE and AMD's\n";
  s << "# recommendations); the rccl-net-plugin module sets them too. If RCCL hangs, the guide\n";
  s << "# advises NCCL_SOCKET_IFNAME=hsn0.\n";
  s << "export NCCL_SOCKET_IFNAME=hsn0,hsn1,hsn2,hsn3\n";
  s << "export NCCL_CROSS_NIC=1\n";
  s << "export NCCL_NET_GDR_LEVEL=PHB\n";
  s << "export HSA_FORCE_FINE_GRAIN_PCIE=1\n";
  s << "export FI_MR_CACHE_MONITOR=kdreg2\n";
  s << "export FI_CXI_DISABLE_HOST_REGISTER=1\n";
  s << "export FI_CXI_DEFAULT_CQ_SIZE=131072\n";
  s << "export FI_CXI_DEFAULT_TX_SIZE=2048\n";
  s << "export FI_CXI_RX_MATCH_MODE=hybrid\n";
  s << "export FI_CXI_RDZV_PROTO=alt_read\n";
  s << "export FI_CXI_RDZV_EAGER_SIZE=0\n";
  s << "export FI_CXI_RDZV_THRESHOLD=0\n";
  s << "export FI_CXI_RDZV_GET_MIN=0\n";
  s << "# The guide: the plugin does not initialise on one node; force it (OFI) on more.\n";
  s << "if [ \"$SLURM_JOB_NUM_NODES\" -gt 1 ]; then export NCCL_NET=OFI; else export NCCL_NET=Socket; fi\n";
  s << env_block(x.plan, x.options.engine) << program_block(program);
  // The per-task part: ranks from Slurm, a private MIOpen cache per task.
  // With --gpus-per-task=1 every task sees exactly one GPU, device 0, so
  // LOCAL_RANK (which Megatron, DeepSpeed and torchtitan pass to set_device) is 0;
  // SLURM_LOCALID still names the GCD's slot on the node. DeepSpeed's qgZ
  // sizes its node-local stage by the GPUs a task sees
  // (get_accelerator().device_count(), runtime/comm/coalesced_collectives.py
  // and utils/groups.py _get_local_all_to_all_group, v0.17.0): one would
  // send every reduction across the network, so under qgZ each task sees
  // the node's GCDs and takes its own by SLURM_LOCALID.
  const bool node_visible =
      x.plan.config.qgz && x.options.engine != Engine::kMegatron && x.options.engine != Engine::kTorchtitan;
  s << "\n# One task per GCD: " << layout.nnodes << " nodes x " << layout.nproc_per_node << " = "
    << layout.world << " ranks.\n";
  if (node_visible)
    s << "# qgZ: every task sees the node's " << layout.nproc_per_node
      << " GCDs (DeepSpeed's node-local stage counts them) and uses GCD SLURM_LOCALID.\n";
  s << "srun -N " << layout.nnodes << " -n " << layout.world << " --ntasks-per-node=" << layout.nproc_per_node
    << " -c7 "
    << (node_visible ? "--gpus-per-node=" + std::to_string(layout.nproc_per_node)
                     : "--gpus-per-task=1 --gpu-bind=closest")
    << " \\\n";
  s << "  bash -c 'export RANK=\"$SLURM_PROCID\" WORLD_SIZE=\"$SLURM_NTASKS\" "
    << (node_visible
            ? "LOCAL_RANK=\"$SLURM_LOCALID\" LOCAL_WORLD_SIZE=" + std::to_string(layout.nproc_per_node)
            : std::string("LOCAL_RANK=0 LOCAL_WORLD_SIZE=1"))
    << " GCD=\"$SLURM_LOCALID\"\n";
  s << "    export MIOPEN_USER_DB_PATH=\"/tmp/miopen-cache-${USER:-user}-$SLURM_PROCID\"\n";
  s << "    export MIOPEN_CUSTOM_CACHE_DIR=\"$MIOPEN_USER_DB_PATH\"\n";
  s << "    rm -rf \"$MIOPEN_USER_DB_PATH\" && mkdir -p \"$MIOPEN_USER_DB_PATH\"\n";
  s << "    exec python3 -u \"$@\"' parplan-rank \"${PROGRAM[@]}\"\n";
  return s.str();
}

}  // namespace parplan::emit_detail
