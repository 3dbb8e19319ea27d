// A participant's check of a job plan against the operator's order it carries: who signed
// it, to whom, when, and whether the plan stays inside what the order asked for.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "hetcast/error.hpp"
#include "hetcast/runtime/plan_order.hpp"

namespace hetcast {
using json = nlohmann::json;

namespace {

std::string quoted(const std::string& s) { return "'" + s.substr(0, 200) + "'"; }

void check_message(const JobMessage& got, const ScopedMessage& want, MessageId m) {
    const std::string which = "message " + std::to_string(m);
    if (got.source != want.source) {
        throw InputError(which + " comes from " + quoted(got.source) + ", the order's from " + quoted(want.source));
    }
    if (got.origin != want.origin) {
        throw InputError(which + " is read from " + quoted(got.origin) + ", not what the order names");
    }
    if (got.name != want.name) {
        throw InputError(which + " lands at " + quoted(got.name) + ", the order's at " + quoted(want.name));
    }
    if (got.tree.empty() == want.tree) throw InputError(which + (want.tree ? " is no bundle" : " is a bundle") + ", unlike the order's");
    if (want.size && got.size != *want.size) {
        throw InputError(which + " has " + std::to_string(got.size) + " bytes, the order's " + std::to_string(*want.size));
    }
    if (want.sha && !net::same_digest(got.sha, *want.sha)) throw InputError(which + " has another SHA-256 than the order's");
    for (const std::string& d : got.dests) {
        if (std::find(want.dests.begin(), want.dests.end(), d) == want.dests.end()) {
            throw InputError(which + " goes to " + quoted(d) + ", which the order does not name");
        }
    }
}

}  // namespace

void check_plan_order(const JobPlan& plan, std::string_view ca_pem, const std::vector<net::Revocation>& revoked,
                      const OrderScopeFn& scope_of, const std::string& me, std::int64_t now) {
    if (plan.order.empty()) throw InputError("the plan carries no operator's order");
    const json order = json::parse(plan.order, nullptr, false);
    if (order.is_discarded()) throw InputError("the plan's order is not JSON");
    (void)check_order(order, ca_pem, revoked, plan.coordinator, now);
    if (const auto cmd = order.find("cmd"); cmd == order.end() || *cmd != "push") throw InputError("the order is no push");
    const OrderScope scope = scope_of(order);
    if (plan.messages.size() != scope.messages.size()) {
        throw InputError("the plan has " + std::to_string(plan.messages.size()) + " messages, the order " +
                         std::to_string(scope.messages.size()));
    }
    bool dest = false;
    for (MessageId m = 0; m < plan.messages.size(); ++m) {
        check_message(plan.messages[m], scope.messages[m], m);
        const auto& ds = plan.messages[m].dests;
        dest = dest || std::find(ds.begin(), ds.end(), me) != ds.end();
    }
    if (!dest && plan.tasks.empty()) throw InputError("the plan gives " + quoted(me) + " nothing to do");
}

}  // namespace hetcast
