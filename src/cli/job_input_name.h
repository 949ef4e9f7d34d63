// How an error names a job input: the flag, or the job file's field the
// flag overrides.
#pragma once

#include <string>

#include "src/cli/job_options.h"

namespace parplan {

inline std::string input_name(const JobFlags& f, bool flag_given, const char* flag, const char* key) {
  if (flag_given || !f.job_file) return flag;
  return *f.job_file + ": field '" + key + "'";
}

}  // namespace parplan
