// The pipeline timeline: Megatron-LM's pass order, the closed-form spans of
// 1F1B and interleaved 1F1B (Narayanan et al. 2021, sec. 2.2), the
// schedule's own rules, and the timeline `plan --timeline` draws.
#include "cost/pipeline_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cost/step_cost.h"
#include "src/report/pipeline_svg.h"
#include "tests/llama3_8b_h100_case.h"

namespace parplan::test {
namespace {

StagePassTimes uniform(int stages, double forward_s, double backward_s) {
  return {std::vector<double>(stages, forward_s), std::vector<double>(stages, backward_s)};
}

int forwards_before_first_backward(const std::vector<ScheduledPass>& order) {
  int n = 0;
  while (n < static_cast<int>(order.size()) && !order[n].backward) ++n;
  return n;
}

TEST(PipelineTimeline, WarmUpCountsAreMegatronsOwn) {
  // schedules.py get_pp_rank_microbatches: pp - rank - 1 warm-up forwards
  // without interleaving, 2 (pp - rank - 1) + (vp - 1) pp with it, capped
  // at all of them; the steady state then starts with one more forward.
  for (int pp : {2, 4, 8})
    for (int r = 0; r < pp; ++r) {
      EXPECT_EQ(forwards_before_first_backward(megatron_pass_order(pp, 1, 16, r)), pp - r);
      EXPECT_EQ(forwards_before_first_backward(megatron_pass_order(pp, 3, 16, r)),
                std::min(48, 2 * (pp - r - 1) + 2 * pp + 1));
    }
  // pp micro-batches through 2 chunks on 4 ranks: rank 0 would warm up with
  // 2*3 + 4 = 10 of its 8 virtual micro-batches, so all are warm-up.
  EXPECT_EQ(forwards_before_first_backward(megatron_pass_order(4, 2, 4, 0)), 8);
}

TEST(PipelineTimeline, InterleavedChunksTakeTurnsInGroupsOfPp) {
  // get_schedule_table(8 micro-batches, 2 chunks, group 4): micro-batches
  // 0-3 through chunk 0, then 0-3 through chunk 1, then 4-7 likewise.
  const std::vector<ScheduledPass> order = megatron_pass_order(4, 2, 8, 3);
  std::vector<std::pair<int, int>> forwards;
  for (const ScheduledPass& p : order)
    if (!p.backward) forwards.emplace_back(p.micro_batch, p.chunk);
  const std::vector<std::pair<int, int>> expected = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {0, 1}, {1, 1},
                                                     {2, 1}, {3, 1}, {4, 0}, {5, 0}, {6, 0}, {7, 0},
                                                     {4, 1}, {5, 1}, {6, 1}, {7, 1}};
  EXPECT_EQ(forwards, expected);
  // The backward walks the chunks the other way: chunk 1 first.
  const auto first_backward = std::find_if(order.begin(), order.end(), [](auto& p) { return p.backward; });
  ASSERT_NE(first_backward, order.end());
  EXPECT_EQ(first_backward->chunk, 1);
  EXPECT_EQ(first_backward->micro_batch, 0);
}

TEST(PipelineTimeline, OneFOneBSpanIsTheClosedForm) {
  // PipeDream-Flush: (m + p - 1) (t_f + t_b) with equal stages; the bubble
  // is (p - 1) / m of the compute.
  for (int pp : {1, 2, 4, 8})
    for (int m : {1, 3, 8, 32}) {
      const PipelineTimeline t = simulate_pipeline(pp, 1, m, uniform(pp, 1.0, 2.0), 0.0);
      EXPECT_NEAR(t.span_s, (m + pp - 1) * 3.0, 1e-9) << pp << " " << m;
      EXPECT_EQ(t.ops.size(), 2u * pp * m);
    }
}

TEST(PipelineTimeline, InterleavedSpanIsTheClosedForm) {
  // Interleaved 1F1B with v chunks of 1/v of the stage each: the bubble
  // shrinks to (p - 1) / v stage passes, when m is a multiple of p.
  for (int pp : {2, 4, 8})
    for (int vp : {2, 3, 4})
      for (int groups : {1, 2, 5}) {
        const int m = groups * pp;
        const PipelineTimeline t = simulate_pipeline(pp, vp, m, uniform(pp * vp, 1.0 / vp, 2.0 / vp), 0.0);
        EXPECT_NEAR(t.span_s, m * 3.0 + (pp - 1) * 3.0 / vp, 1e-9) << pp << " " << vp << " " << m;
      }
}

TEST(PipelineTimeline, EveryPassRunsOnceInDependencyOrder) {
  for (int pp : {1, 3, 4})
    for (int vp : {1, 2, 3})
      for (int m : {1, 2, 5, 7, 12, 24}) {
        if (vp > 1 && (pp < 2 || m % pp != 0)) continue;  // not a schedule Megatron-LM runs
        StagePassTimes times;
        for (int v = 0; v < pp * vp; ++v)
          times.forward_s.push_back(0.5 + 0.3 * v), times.backward_s.push_back(1.0 + 0.1 * (pp * vp - v));
        const double hop_s = 0.05;
        const PipelineTimeline t = simulate_pipeline(pp, vp, m, times, hop_s);
        std::set<std::tuple<int, int, int, bool>> seen;
        std::vector<double> free_at(pp, 0.0);
        for (const PipelineOp& op : t.ops) {
          EXPECT_TRUE(seen.insert({op.rank, op.chunk, op.micro_batch, op.backward}).second);
          EXPECT_GE(op.start_s, free_at[op.rank] - 1e-12);  // a rank runs one pass at a time
          free_at[op.rank] = op.end_s;
        }
        EXPECT_EQ(seen.size(), 2u * pp * vp * m);
        // Forward through virtual stage s waits for stage s-1 (a hop later);
        // backward through s for s+1, and the last stage's for its forward.
        const auto end_of = [&](int stage, int mb, bool backward) {
          for (const PipelineOp& op : t.ops)
            if (op.chunk * pp + op.rank == stage && op.micro_batch == mb && op.backward == backward)
              return op.end_s;
          return -1.0;
        };
        for (const PipelineOp& op : t.ops) {
          const int stage = op.chunk * pp + op.rank;
          double ready_s = 0;
          if (!op.backward && stage > 0) ready_s = end_of(stage - 1, op.micro_batch, false) + hop_s;
          if (op.backward && stage + 1 < pp * vp) ready_s = end_of(stage + 1, op.micro_batch, true) + hop_s;
          if (op.backward && stage + 1 == pp * vp) ready_s = end_of(stage, op.micro_batch, false);
          EXPECT_GE(op.start_s, ready_s - 1e-12);
        }
      }
}

TEST(PipelineTimeline, LongerPassesNeverShortenTheStep) {
  // The span is a max-plus function of the durations: monotone in each.
  StagePassTimes base = uniform(8, 1.0, 2.0);
  const double before = simulate_pipeline(4, 2, 8, base, 0.01).span_s;
  for (int r = 0; r < 8; ++r) {
    StagePassTimes slower = base;
    slower.backward_s[r] *= 1.3;
    EXPECT_GE(simulate_pipeline(4, 2, 8, slower, 0.01).span_s, before);
    slower = base;
    slower.forward_s[r] *= 1.3;
    EXPECT_GE(simulate_pipeline(4, 2, 8, slower, 0.01).span_s, before);
  }
  EXPECT_GE(simulate_pipeline(4, 2, 8, base, 0.2).span_s, before);
}

TEST(PipelineTimeline, RejectsSizesThatDoNotFit) {
  EXPECT_THROW(simulate_pipeline(4, 1, 8, uniform(3, 1, 2), 0), std::invalid_argument);
  EXPECT_THROW(simulate_pipeline(4, 2, 8, uniform(4, 1, 2), 0), std::invalid_argument);  // per virtual stage
  EXPECT_THROW(simulate_pipeline(0, 1, 8, uniform(0, 1, 2), 0), std::invalid_argument);
  EXPECT_THROW(megatron_pass_order(4, 1, 8, 4), std::invalid_argument);
  EXPECT_THROW(megatron_pass_order(4, 2, 6, 0), std::invalid_argument);  // m not a multiple of pp
  EXPECT_THROW(megatron_pass_order(1, 2, 8, 0), std::invalid_argument);  // interleaving without pp
}

struct Llama3_8bPipeline : Llama3_8bOnH100 {
  Llama3_8bPipeline() {
    job.gpus = 16, job.gbs = 64, job.seq = 8192;
    config.tp = 2, config.pp = 4, config.vp = 2, config.dp = 2, config.mbs = 1, config.gbs = 64;
    config.sp = true;
  }
};

TEST(PipelineTimeline, CostModelTimelineSitsBetweenTheBusiestRankAndTheUniformBound) {
  Llama3_8bPipeline c;
  const PipelineTimeline t = pipeline_timeline(c.model, c.cluster, c.job, c.config);
  ASSERT_EQ(t.micro_batches, 32);
  double busiest_s = 0, forward_max_s = 0, backward_max_s = 0;
  for (int r = 0; r < c.config.pp; ++r) {
    double busy = 0;
    for (const PipelineOp& op : t.ops) {
      const double d = op.end_s - op.start_s;
      if (op.rank == r) busy += d;
      (op.backward ? backward_max_s : forward_max_s) =
          std::max(op.backward ? backward_max_s : forward_max_s, d);
    }
    busiest_s = std::max(busiest_s, busy);
  }
  // No schedule beats its busiest rank; every pass is at most the longest
  // forward or backward, so the span is within their uniform closed form.
  EXPECT_GE(t.span_s, busiest_s - 1e-9);
  const int pp = c.config.pp, vp = c.config.vp, m = t.micro_batches;
  EXPECT_LE(t.span_s, (m * vp + (pp - 1.0)) * (forward_max_s + backward_max_s) + 1e-9);
  // The cost model charges every rank the slowest one's passes: the
  // simulated span is at most its compute, exposed pipeline-side traffic and
  // bubble together.
  const TimeBreakdown time = estimate_cost(c.model, c.cluster, c.job, c.config).time;
  EXPECT_LE(t.span_s, time.compute_s + time.tp_comm_s + time.cp_comm_s + time.pp_comm_s + time.ep_comm_s +
                          time.bubble_s + 1e-9);
}

TEST(PipelineTimeline, SvgDrawsEveryStageAndPass) {
  Llama3_8bPipeline c;
  const CostReport cost = estimate_cost(c.model, c.cluster, c.job, c.config);
  const std::string svg = pipeline_timeline_text("step.svg", c.model, c.cluster, c.job, c.config, cost);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("stage 3"), std::string::npos);
  std::size_t passes = 0;
  for (std::size_t at = svg.find("<title>micro-batch"); at != std::string::npos;
       at = svg.find("<title>micro-batch", at + 1))
    ++passes;
  EXPECT_EQ(passes, 2u * 4 * 2 * 32);
}

TEST(PipelineTimeline, SvgOfAVeryLongStepLeavesOutTheSteadyStateMiddle) {
  // 8 ranks x 4 chunks x 400 micro-batches x 2 = 25 600 passes.
  const PipelineTimeline t = simulate_pipeline(8, 4, 400, uniform(32, 0.25, 0.5), 0.0);
  CostReport cost;
  cost.time.step_s = t.span_s;
  const std::string svg = pipeline_svg(t, cost, "long");
  std::size_t passes = 0;
  for (std::size_t at = svg.find("<title>micro-batch"); at != std::string::npos;
       at = svg.find("<title>micro-batch", at + 1))
    ++passes;
  EXPECT_LT(passes, t.ops.size());
  EXPECT_LE(passes, 12000u + 2 * 8);
  EXPECT_NE(svg.find("of the steady state not drawn"), std::string::npos);
}

TEST(PipelineTimeline, SvgCutKeepsEveryWarmUpAndCoolDownPassAndNothingInTheGap) {
  // pp 16, vp 2, 208 micro-batches: 13 312 passes, over the 12 000 drawn;
  // the warm-ups (2 x 15 + 16 + 1 forwards on stage 0) and cool-downs must
  // be drawn whole, the cut coming from the steady state alone.
  const PipelineTimeline t = simulate_pipeline(16, 2, 208, uniform(32, 0.01, 0.02), 0.0);
  CostReport cost;
  cost.time.step_s = t.span_s;
  const std::string svg = pipeline_svg(t, cost, "long");
  std::set<std::string> drawn;
  for (std::size_t at = svg.find("<title>micro-batch"); at != std::string::npos;
       at = svg.find("<title>micro-batch", at + 1))
    drawn.insert(svg.substr(at + 7, svg.find("</title>", at) - at - 7));
  std::vector<double> first_backward_s(16, t.span_s), last_forward_end_s(16, 0.0);
  for (const PipelineOp& op : t.ops) {
    if (op.backward)
      first_backward_s[op.rank] = std::min(first_backward_s[op.rank], op.start_s);
    else
      last_forward_end_s[op.rank] = std::max(last_forward_end_s[op.rank], op.end_s);
  }
  std::size_t must = 0;
  for (const PipelineOp& op : t.ops) {
    if (op.start_s > first_backward_s[op.rank] && op.end_s < last_forward_end_s[op.rank]) continue;
    ++must;
    char title[160];
    std::snprintf(title, sizeof title, "micro-batch %d, chunk %d, %s, %.4f - %.4f s", op.micro_batch,
                  op.chunk, op.backward ? "backward" : "forward", op.start_s, op.end_s);
    EXPECT_EQ(drawn.count(title), 1u) << title;
  }
  EXPECT_GT(must, 16u * 47);
  EXPECT_NE(svg.find("of the steady state not drawn"), std::string::npos);
  // No pass is drawn across the gap the white mask covers.
  const std::size_t mask = svg.find("fill=\"white\"/>\n<text");
  ASSERT_NE(mask, std::string::npos);
  const double gap_from_px = std::stod(svg.substr(svg.rfind("<rect x=\"", mask) + 9));
  const double gap_to_px = gap_from_px + std::stod(svg.substr(svg.rfind("width=\"", mask) + 7));
  for (std::size_t at = svg.find("<rect x=\""); at < mask; at = svg.find("<rect x=\"", at + 1)) {
    if (svg.compare(svg.find('>', at) - 1, 1, "/") == 0) continue;  // backgrounds and the mask
    if (svg.find("<title>micro-batch", at) != svg.find('>', at) + 1) continue;
    const double x = std::stod(svg.substr(at + 9));
    const double w = std::stod(svg.substr(svg.find("width=\"", at) + 7));
    EXPECT_TRUE(x + w <= gap_from_px + 1e-6 || x >= gap_to_px - 1e-6) << svg.substr(at, 120);
  }
}

}  // namespace
}  // namespace parplan::test
