// plan's top-K table: two plans that differ only in how ZeRO-3 shards (HSDP
// or ZeRO++'s secondary partition against the flat one) used to print the
// same row; the layout column tells them apart.
#include <gtest/gtest.h>

#include "src/report/table_report.h"

namespace parplan {
namespace {

std::vector<RankedConfig> twins() {
  RankedConfig flat;
  flat.config.dp = 256;
  flat.config.zero = 3;
  RankedConfig grouped = flat;
  grouped.config.hpz_ranks = 32;
  return {grouped, flat};
}

std::vector<std::string> rows(const std::string& table) {
  std::vector<std::string> out;
  std::size_t at = table.find('\n') + 1;  // past the header
  while (at < table.size()) {
    const std::size_t end = table.find('\n', at);
    out.push_back(table.substr(at + 4, end - at - 4));  // without the rank
    at = end + 1;
  }
  return out;
}

TEST(AlternativesLayout, ShardingLayoutSetsRowsApart) {
  JobSpec fsdp;
  fsdp.fsdp_copy_out = true;  // PyTorch FSDP: a secondary group is HSDP
  const std::string hsdp = alternatives_table(twins(), false, &fsdp);
  ASSERT_EQ(rows(hsdp).size(), 2u);
  EXPECT_NE(rows(hsdp)[0], rows(hsdp)[1]) << hsdp;
  EXPECT_NE(hsdp.find("hsdp/32"), std::string::npos) << hsdp;
  const std::string zeropp = alternatives_table(twins(), false, nullptr);
  EXPECT_NE(zeropp.find("zero++/hpz32"), std::string::npos) << zeropp;
  // Nothing beyond the columns: no layout column.
  const std::string plain = alternatives_table({twins()[1]}, false, &fsdp);
  EXPECT_EQ(plain.find("layout"), std::string::npos) << plain;
}

}  // namespace
}  // namespace parplan
