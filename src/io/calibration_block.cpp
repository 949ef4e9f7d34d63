#include "src/io/calibration_block.h"

namespace parplan {

ProfileCalibration read_calibration_block(const YamlFields& f) {
  f.allow_only({"date", "tool", "objective", "sources", "runs", "fitted", "mean_step_error", "max_step_error",
                "cv_mean_step_error", "cv_max_step_error", "notes"});
  ProfileCalibration c;
  // A block without its error would print "+-0.0% on 0 calibration runs"
  // and give the recommendation a zero band: the error is what it is for.
  if (!f.has("mean_step_error"))
    f.fail("mean_step_error", "is missing; give the held-in mean |step error| as a fraction (0.04 = 4 %)");
  c.mean_step_error = f.number_in("mean_step_error", 0, 10, 0);
  c.max_step_error = f.number_in("max_step_error", 0, 10, c.mean_step_error);
  if (c.max_step_error < c.mean_step_error)
    f.fail("max_step_error", "is below mean_step_error; give the largest |step error| of the runs");
  c.cv_mean_step_error = f.number_in("cv_mean_step_error", 0, 10, -1);
  if (!f.has("runs")) f.fail("runs", "is missing; give the number of runs the constants were fitted to");
  c.runs = f.positive_int("runs");
  return c;
}

}  // namespace parplan
