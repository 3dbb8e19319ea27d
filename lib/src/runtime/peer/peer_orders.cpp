// What a member does only under an operator's order (runtime/order.hpp): read one of its
// files for another member, and take part in a job another member plans.
#include <nlohmann/json.hpp>

#include <ctime>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/order.hpp"
#include "hetcast/runtime/plan_order.hpp"
#include "peer_impl.hpp"

namespace hetcast {
using namespace detail;

void Peer::Impl::authorize_read(const std::string& origin, const std::string& order, const std::string& via) const {
    if (origin.rfind("file:", 0) != 0) return;
    const std::string path = origin.substr(5);
    const auto refuse = [&](const std::string& why) {
        return InputError("'" + cfg.name + "' reads '" + path + "' for '" + via + "' only with an operator's order naming it: " + why);
    };
    if (order.empty()) throw refuse("there is none");
    const json req = json::parse(order, nullptr, false);
    const std::vector<net::Revocation> revoked = revocations.all();
    try {
        (void)check_order(req, cfg.identity.ca_pem, revoked, via, static_cast<std::int64_t>(std::time(nullptr)));
    } catch (const InputError& e) {
        throw refuse(e.what());
    }
    if (!order_names_file(req, cfg.name, path)) throw refuse("the order has no entry with this source and file");
}

void Peer::Impl::authorize_plan(const JobPlan& plan) const {
    if (!cfg.order_scope) return;
    const std::vector<net::Revocation> revoked = revocations.all();
    try {
        check_plan_order(plan, cfg.identity.ca_pem, revoked, cfg.order_scope, cfg.name,
                         static_cast<std::int64_t>(std::time(nullptr)));
    } catch (const std::exception& e) {
        // Nothing was prepared: no file is created, and the start and data of this job find
        // none. on_frame logs this and closes the connection with it as the reason (an error
        // frame), which the coordinator reports for this member.
        throw InputError("refused job " + std::to_string(plan.job) + ": " + e.what());
    }
}

}  // namespace hetcast
