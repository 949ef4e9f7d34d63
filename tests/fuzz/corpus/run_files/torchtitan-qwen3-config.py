# torchtitan config written by parplan for qwen3-30b-a3b on 32 ranks: tp 1, pp 2, vp 2, cp 1, dp 16, zero 2, mbs 1, gbs 256.
# Targets torchtitan main: Python dataclass configs (since pytorch/torchtitan#2386, 9810191,
# 2026-02-23), read at b5bcd76 (2026-08-21). For the v0.2.x TOML config emit with --engine-version 0.2.
# Run with: python -m torchtitan.train --module parplan_torchtitan --config parplan_plan
# (this folder on PYTHONPATH; launch.sh does both). Reads HF_ASSETS_PATH and TRAIN_STEPS.
import os

from torchtitan.config import CompileConfig, ParallelismConfig
from torchtitan.models.qwen3 import model_registry
from torchtitan.models.qwen3.config_registry import qwen3_30b_a3b
from torchtitan.trainer import Trainer


def parplan_plan() -> Trainer.Config:
    # The registered recipe supplies the loss, optimizer, data loader (c4) and checkpointing;
    # edit config.dataloader for your data. The plan's choices follow.
    config = qwen3_30b_a3b()
    # bf16 weights and GEMMs, as costed.
    # Attention: FlexAttention (model_registry's default attn_backend), costed as
    # causal over each whole sequence; packed shorter documents (block-causal) cost less.
    config.model_spec = model_registry("30B-A3B")
    config.hf_assets_path = os.environ.get("HF_ASSETS_PATH", "./assets/hf/Qwen3-30B-A3B")
    config.training.steps = int(os.environ.get("TRAIN_STEPS", "1000"))
    config.training.max_context_length = 4096
    # mbs 1 sequence(s) of 4096 tokens per micro-batch and data-parallel rank;
    # gbs 256 sequences per optimizer step.
    config.training.num_tokens_per_microbatch_per_dp_rank = 4096
    config.training.num_tokens_per_train_step = 1048576
    config.training.mixed_precision_param = "bfloat16"
    config.parallelism = ParallelismConfig(
        data_parallel_replicate_degree=1,
        data_parallel_shard_degree=16,
        fsdp_reshard_after_forward="never",
        tensor_parallel_degree=1,
        enable_sequence_parallel=False,
        pipeline_parallel_degree=2,
        pipeline_parallel_schedule="Interleaved1F1B",
        num_pp_microbatches=16,
        # The split as costed: the embedding and output count as these many layers.
        pipeline_parallel_first_stage_less_layers=0,
        pipeline_parallel_last_stage_less_layers=0,
        context_parallel_degree=1,
        expert_parallel_degree=4,
    )
    config.compile = CompileConfig(enable=True, components=["model", "loss"])
    config.activation_checkpoint = None
    return config
