// Sliding-window attention (ModelSpec::sliding_window): the query-key pairs
// a windowed layer computes, and the sequence length whose causal kernel
// does the same work per query block.
#pragma once

#include "cost/spec/model_spec.h"

namespace parplan {

/// Pairs (query, key <= query) of causal attention over `seq` tokens:
/// seq (seq + 1) / 2.
double causal_pairs(double seq);

/// Pairs of a window of `window` tokens (the query and the window - 1
/// before it) over `seq` tokens: sum over positions i of min(i + 1,
/// window); causal_pairs(seq) when window <= 0 or window >= seq.
double window_pairs(double seq, double window);

/// Fraction of the model's layers that are windowed (0 without a window).
double windowed_layer_fraction(const ModelSpec& model);

/// The attention work of an average layer over that of full causal
/// attention at `seq`: 1 - f + f window_pairs / causal_pairs, with f the
/// windowed fraction. Scales the attention FLOPs of every layer, so that
/// the model's total is exact.
double attention_pair_ratio(const ModelSpec& model, double seq);

/// The sequence length whose causal kernel does a windowed layer's work per
/// query block: a block of B queries visits about window / B + 1 key
/// blocks, a causal kernel at length L on average (L / B + 1) / 2, equal
/// at L = 2 window. The kernel's efficiency is read there (min(seq,
/// 2 window)).
double windowed_kernel_seq(double seq, double window);

}  // namespace parplan
