// How many of their random trials the heavy property tests run: all in the
// optimised build, a third under the sanitizers (PARPLAN_SANITIZED, 3-15x
// slower), whose point is memory and undefined-behaviour errors on the code
// paths the trials reach, not the count of trials.
#pragma once

namespace parplan::test {

#ifdef PARPLAN_SANITIZED
inline constexpr int kTrialStride = 3;
#else
inline constexpr int kTrialStride = 1;
#endif

}  // namespace parplan::test
