#include "cost/loss_passes.h"

namespace parplan {

namespace {
constexpr double k16 = 2.0;  // bytes of a bf16 logit or gradient
constexpr double k32 = 4.0;  // bytes of its fp32 copy
// One elementwise pass over fp32 values: read and write.
constexpr double kFp32Pass = k32 + k32;
// The upcast of the 16-bit logits (read 2, write 4), and the cast of the
// fp32 gradient back to the logits' dtype for the LM-head GEMM's backward
// (read 4, write 2).
constexpr double kUpcast = k16 + k32;
constexpr double kDowncast = k32 + k16;
}  // namespace

LossPassBytes loss_pass_bytes(CrossEntropy kernel, int tp) {
  LossPassBytes bytes;
  switch (kernel) {
    case CrossEntropy::kTeInPlace:
      // Transformer Engine's Triton kernels on the 16-bit logits
      // (transformer_engine/common/triton/cross_entropy.py and pytorch/
      // triton/cross_entropy.py @ 36f2dfd28, before 01bbe3e moved the
      // gradient to an fp32 buffer): online_softmax_kernel reads the logits
      // once for the running max and sum (2); cross_entropy_kernel reads them
      // again and writes the gradient over them in place (2 + 2). The
      // backward's element_mul_kernel scales it by the per-token incoming
      // gradient in place (2 + 2); Megatron calls it with reduce_loss False
      // (te_parallel_cross_entropy, megatron/core/extensions/
      // transformer_engine.py @ d98e8a64), so grad_output is per token and
      // the torch.equal(grad_output, 1.0) skip does not apply.
      bytes.forward = k16 + k16 + k16;
      bytes.backward = k16 + k16;
      return bytes;
    case CrossEntropy::kCompiled:
      if (tp == 1) {
        // torchtitan's F.cross_entropy(pred.float(), labels) under
        // torch.compile (torchtitan/components/loss.py @ b5bcd76c,
        // _maybe_compile): Inductor fuses the upcast into looped row
        // reductions over the 16-bit logits, one for the max and one for the
        // sum of exponentials (2 + 2), and the backward into one pass that
        // reads them and writes the 16-bit gradient (2 + 2). Measured on an
        // H100 (calibration/h100-kernels/memory.csv, 8192 x 128256 logits):
        // the time of 8.3 bytes per logit at the H100 profiles' rate.
        bytes.forward = k16 + k16;
        bytes.backward = k16 + k16;
        return bytes;
      }
      // tp > 1: the loss-parallel autograd function, priced as eager.
      [[fallthrough]];
    case CrossEntropy::kEager:
      if (tp > 1) {
        // torchtitan's loss_parallel (tp > 1, torchtitan/parallelisms/
        // parallel_dims.py:119 @ 9dec370) runs cross_entropy on the vocabulary
        // shard through PyTorch's decomposition with all-reduces inserted
        // (torch/distributed/tensor/parallel/loss.py @ 02eef6b8): _log_softmax
        // amax (4), x - max (4 + 4), exp (4 + 4), sum (4), shifted - log-sum
        // (4 + 4) after the upcast; _nll_loss_and_log_softmax_backward
        // zeros_like (4), exp of the saved log-softmax (4 + 4), grad_input +
        // exp (4 + 4 + 4), times grad_output (4 + 4), then the downcast.
        bytes.forward = kUpcast + k32 + 2.0 * kFp32Pass + k32 + kFp32Pass;
        bytes.backward = k32 + kFp32Pass + (k32 + kFp32Pass) + kFp32Pass + kDowncast;
        return bytes;
      }
      // torchtitan's F.cross_entropy(pred.flatten(0, 1).float(), ...) (train.py
      // loss_fn @ 9dec370; torch.compile of the loss is commented out there):
      // the upcast, then PyTorch's log_softmax kernel (aten/src/ATen/native/
      // cuda/SoftMax.cu @ 000cace5, cunn_SoftMaxForward: the row read once for
      // the max, once for the sum of exponentials and once more to write the
      // output: 4 + 4 + 4 + 4). The shared-memory variant that reads the row
      // once needs it under sharedMemPerBlock (48 KiB: fewer than 12k fp32
      // logits), below any catalog vocabulary on one rank. Backward:
      // nll_loss_backward zero-fills the fp32 gradient (aten/src/ATen/native/
      // cuda/Loss.cu, grad_input.zero_(): 4) and writes -1 at the targets;
      // cunn_SoftMaxBackward reads it for the row sum, then reads it and the
      // saved output and writes the gradient (4 + 4 + 4 + 4); the cast of
      // .float() backward brings it to bf16.
      bytes.forward = kUpcast + 4.0 * k32;
      bytes.backward = k32 + 4.0 * k32 + kDowncast;
      return bytes;
    case CrossEntropy::kFused:
      break;
  }
  // Megatron's VocabParallelCrossEntropy, one PyTorch kernel per step
  // (megatron/core/tensor_parallel/cross_entropy.py @ core_v0.8.0, the same
  // steps at d98e8a64): upcast (.float(), line 27), max (29: 4), logits -=
  // max in place (43: 4 + 4), exp in place (63: 4 + 4), sum (64: 4), divide
  // by the sum in place (77: 4 + 4), the softmax saved for the backward; the
  // backward subtracts 1 at the targets (per row) and multiplies by the
  // incoming gradient in place (113: 4 + 4), and the autograd engine casts
  // the fp32 gradient to the bf16 logits' dtype (validate_outputs, torch/
  // csrc/autograd/engine.cpp). This is Megatron-Core's default
  // (cross_entropy_loss_fusion False, model_parallel_config.py:201 @
  // core_v0.8.0), which NeMo 24.07 kept for GPT-3 and Llama 2 (NeMo-Framework-
  // Launcher launcher_scripts/conf/training @ tag 24.07, 8325688, sets
  // cross_entropy_loss_fusion only in the Llama 3 and Nemotron configs).
  // The fused variant (megatron/core/fusions/fused_cross_entropy.py) runs the
  // same steps as four torch.compile graphs (megatron/core/jit.py: jit_fuser
  // is torch.compile from PyTorch 2.2) with an explicit downcast; how many
  // of its in-place passes Inductor merges is not established here, so both
  // keep this count.
  bytes.forward = kUpcast + k32 + kFp32Pass + kFp32Pass + k32 + kFp32Pass;
  bytes.backward = kFp32Pass + kDowncast;
  return bytes;
}

}  // namespace parplan
