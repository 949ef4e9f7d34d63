// torchtitan main masks attention per document (cost/document_mask.h): a
// sequence of packed documents costs its pieces' causal squares. The share
// is checked against the pieces counted directly over every phase of the
// packing; the layer prices that share at a document-length kernel.
#include "cost/document_mask.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "cost/attention_kernels.h"
#include "cost/compute_time.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/cli_support.h"

namespace parplan {
namespace {

// Documents of d tokens back to back, the sequence window [0, s) starting
// at offset `phase` into a document: the sum of the squares of the pieces
// the window cuts, averaged over every whole-token phase.
double counted_share(int s, int d) {
  double total = 0;
  for (int phase = 0; phase < d; ++phase) {
    double squares = 0;
    int start = 0;
    int boundary = d - phase;  // first document boundary inside the window
    while (start < s) {
      const int end = std::min(s, boundary);
      squares += static_cast<double>(end - start) * (end - start);
      start = end;
      boundary += d;
    }
    total += squares / (static_cast<double>(s) * s);
  }
  return total / d;
}

TEST(DocumentMask, ShareEqualsThePiecesCountedOverEveryPhase) {
  for (int s : {512, 4096}) {
    for (int d : {64, 128, 300, 512, 1000, 4096, 5000, 20000}) {
      // Whole-token phases sum x^2 where the formula integrates it: the
      // difference is of order 1 / d.
      EXPECT_NEAR(document_mask_work_share(s, d), counted_share(s, d), 1.0 / d + 1e-9) << s << " " << d;
    }
  }
  EXPECT_DOUBLE_EQ(document_mask_work_share(8192, 0), 1.0);
  EXPECT_NEAR(document_mask_work_share(8192, 8192), 2.0 / 3.0, 1e-12);
  // Much longer documents: almost never cut inside the sequence.
  EXPECT_GT(document_mask_work_share(8192, 1 << 24), 0.9998);
}

// The layer's attention core: the share of the causal work, at the
// efficiency of a kernel as long as one document.
TEST(DocumentMask, AttentionCostsTheShareAtTheDocumentLength) {
  const ModelSpec model = load_model("llama3-8b");
  const DeviceSpec device = load_cluster("dgx-h100").device;
  LayerShape shape;
  shape.tokens = 8192;
  shape.seq = 8192;
  shape.kernel = AttentionKernel::kFlex;
  const LayerComputeTimes whole = layer_compute_times(model, device, device.peak_bf16_flops_per_s, shape);
  for (double d : {512.0, 2048.0}) {
    shape.document_tokens = d;
    const LayerComputeTimes masked = layer_compute_times(model, device, device.peak_bf16_flops_per_s, shape);
    const AttentionEfficiency at_seq = attention_efficiency(device, AttentionKernel::kFlex, 8192);
    const AttentionEfficiency at_doc = attention_efficiency(device, AttentionKernel::kFlex, d);
    const double share = document_mask_work_share(8192, d);
    EXPECT_NEAR(masked.attention_forward_s / whole.attention_forward_s,
                share * at_seq.forward / at_doc.forward, 1e-9)
        << d;
    EXPECT_NEAR(masked.attention_backward_s / whole.attention_backward_s,
                share * at_seq.backward / at_doc.backward, 1e-9)
        << d;
    EXPECT_LT(masked.forward_s + masked.backward_s, whole.forward_s + whole.backward_s) << d;
  }
}

double step_s(const std::string& extra) {
  const test::CliRun run = test::run_cli(
      "estimate --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 32 --seq 8192 --tp 1 --pp 1 --mbs 1 "
      "--zero 3 --engine torchtitan --format json " +
      extra);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return nlohmann::json::parse(run.out)["time"]["step_s"].get<double>();
}

TEST(DocumentMask, FlagAndJobKeyShortenTorchtitanSteps) {
  const double whole = step_s("");
  const double short_documents = step_s("--document-tokens 512");
  EXPECT_LT(short_documents, whole);
  const std::string job =
      test::write_temp("document_job.yaml",
                       "model: llama3-8b\ncluster: dgx-h100\ngpus: 8\ngbs: 32\nseq: 8192\n"
                       "engine: torchtitan\ndocument_tokens: 512\n");
  EXPECT_DOUBLE_EQ(step_s("--job " + job), short_documents);
}

// The table says what the data was taken to be.
TEST(DocumentMask, TableNamesTheDocuments) {
  const test::CliRun run = test::run_cli(
      "estimate --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 32 --seq 8192 --tp 1 --pp 1 --mbs 1 "
      "--zero 3 --engine torchtitan --document-tokens 512");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("documents of 512 tokens"), std::string::npos) << run.out;
  const test::CliRun whole = test::run_cli(
      "estimate --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 32 --seq 8192 --tp 1 --pp 1 --mbs 1 "
      "--zero 3 --engine torchtitan");
  EXPECT_EQ(whole.out.find("documents of"), std::string::npos) << whole.out;
}

// Engines that attend over the whole packed sequence refuse it, naming it.
TEST(DocumentMask, OtherEnginesRefuseIt) {
  const std::string base = "plan --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 32 --seq 8192 ";
  for (const std::string& args :
       {base + "--engine megatron --document-tokens 512", base + "--document-tokens 512",
        base + "--emit torchtitan --engine-version 0.2 --out " + ::testing::TempDir() +
            "document_mask_v02 --document-tokens 512",
        base + "--engine torchtitan --document-tokens 0"}) {
    const test::CliRun run = test::run_cli(args);
    EXPECT_EQ(run.exit_code, 2) << args;
    EXPECT_NE(run.err.find("--document-tokens"), std::string::npos) << run.err;
    EXPECT_EQ(test::line_count(run.err), 1) << run.err;
  }
}

}  // namespace
}  // namespace parplan
