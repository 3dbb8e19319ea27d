#pragma once
/// A participant's check of a job plan against the operator's order it carries
/// (runtime/order.hpp checks the order itself).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hetcast/net/identity.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/order.hpp"
#include "hetcast/runtime/order_scope.hpp"

namespace hetcast {

/// Whether participant `me` may take `plan`: its order (JobPlan::order) is an operator's
/// push order given to the plan's coordinator (check_order), and the plan stays inside the
/// order's scope (`scope_of`): the same messages (source, origin, landing name, bundle or
/// not, size and digest where the order gives them), destinations among the order's, and a
/// part for `me` (a destination or a task). Throws InputError saying what does not match.
void check_plan_order(const JobPlan& plan, std::string_view ca_pem, const std::vector<net::Revocation>& revoked,
                      const OrderScopeFn& scope_of, const std::string& me, std::int64_t now);

}  // namespace hetcast
