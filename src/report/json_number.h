// JSON has no NaN or infinity: a number that is not finite is written as null.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>

namespace parplan {

template <class Json = nlohmann::json>
Json number_or_null(double value) {
  return std::isfinite(value) ? Json(value) : Json(nullptr);
}

}  // namespace parplan
