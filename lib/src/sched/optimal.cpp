#include "hetcast/sched/optimal.hpp"

#include "hetcast/error.hpp"

namespace hetcast {

Schedule plan_optimal(const Network&, const PlanRequest&) { throw Error("optimal: not implemented yet"); }

}  // namespace hetcast
