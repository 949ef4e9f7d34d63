// Attention over packed documents with a per-document causal mask
// (torchtitan main's block-causal FlexAttention): a query attends only to
// the earlier tokens of its own document, so a sequence of S tokens costs
// the causal squares of the document pieces it holds, not one of S.
#pragma once

#include <algorithm>

namespace parplan {

/// The share of a sequence's causal attention work that a per-document
/// mask leaves, for documents of `document_tokens` each packed back to back
/// and cut into sequences of `seq` tokens at a uniformly random phase: the
/// expected sum of the pieces' squares over seq^2. A sequence holding whole
/// documents and two cut ones (document_tokens <= seq) sums
/// seq * D - D^2 / 3; a longer document (D >= seq) crosses a boundary inside
/// the sequence with probability seq / D, at a uniform point x, leaving
/// x^2 + (seq - x)^2, 2 seq^2 / 3 on average. 1 without documents (0).
inline double document_mask_work_share(double seq, double document_tokens) {
  if (document_tokens <= 0 || seq <= 0) return 1.0;
  const double d = document_tokens;
  if (d <= seq) return std::clamp(d / seq - d * d / (3.0 * seq * seq), 0.0, 1.0);
  return 1.0 - seq / (3.0 * d);
}

/// The length whose causal kernel efficiency a masked sequence runs at:
/// each query block visits only its own document's key blocks.
inline double document_mask_kernel_seq(double seq, double document_tokens) {
  return document_tokens > 0 ? std::min(seq, document_tokens) : seq;
}

}  // namespace parplan
