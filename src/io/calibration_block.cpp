#include "src/io/calibration_block.h"

namespace parplan {

ProfileCalibration read_calibration_block(const YamlFields& f) {
  f.allow_only({"date", "tool", "objective", "sources", "runs", "fitted", "mean_step_error", "max_step_error",
                "cv_mean_step_error", "cv_max_step_error", "notes"});
  ProfileCalibration c;
  c.mean_step_error = f.number_in("mean_step_error", 0, 10, 0);
  c.max_step_error = f.number_in("max_step_error", 0, 10, c.mean_step_error);
  c.cv_mean_step_error = f.number_in("cv_mean_step_error", 0, 10, -1);
  c.runs = f.non_negative_int("runs", 0);
  return c;
}

}  // namespace parplan
