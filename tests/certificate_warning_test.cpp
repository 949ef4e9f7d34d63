// A certificate that is not optimal gets one warning line with its gap, and
// unknown numbers print as n/a, never nan (issue 17, item 13).
#include <gtest/gtest.h>

#include <cmath>

#include "src/plan/planner.h"
#include "src/report/json_report.h"
#include "src/report/table_report.h"

namespace parplan {
namespace {

SolverCertificate certificate(SolveStatus status, double gap) {
  SolverCertificate c;
  c.name = "stage_split";
  c.status = status;
  c.backend = "cbc";
  c.gap = gap;
  c.objective = has_solution(status) ? 1.0 : NAN;
  c.best_bound = has_solution(status) ? 1.0 - gap : NAN;
  return c;
}

TEST(CertificateWarning, OnlyNonOptimalCertificatesWarnWithTheirGap) {
  const auto lines = certificate_warnings(
      {certificate(SolveStatus::kOptimal, 0), certificate(SolveStatus::kFeasible, 0.07)});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("7.00 %"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("--solver-time-limit"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find('\n'), std::string::npos);
}

TEST(CertificateWarning, FeasibleIsReportedWithItsGapInJson) {
  const auto j = certificates_json({certificate(SolveStatus::kFeasible, 0.07)}, false);
  EXPECT_EQ(j[0]["status"], "feasible");
  EXPECT_DOUBLE_EQ(j[0]["gap"].get<double>(), 0.07);
  EXPECT_FALSE(j[0].contains("time_s"));
}

TEST(CertificateWarning, UnknownNumbersPrintAsNotAvailable) {
  SolverCertificate error = certificate(SolveStatus::kError, NAN);
  error.backend = "exhaustive";
  error.message = "model too large to enumerate";
  const std::string table = certificates_table({error});
  EXPECT_EQ(table.find("nan"), std::string::npos) << table;
  EXPECT_NE(table.find("n/a"), std::string::npos) << table;
  EXPECT_NE(table.find("too large"), std::string::npos) << table;
  EXPECT_EQ(certificate_warnings({error}).size(), 1u);
}

}  // namespace
}  // namespace parplan
