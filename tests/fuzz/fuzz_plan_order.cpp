// A participant's check of a job plan against the operator's order it carries
// (runtime/plan_order.hpp: check_plan_order). The input is a JSON merge patch applied to a valid
// plan whose order an operator signed (made once, with a CA of this process): whatever it
// changes, the plan must decode and check with Error or not at all, and a plan that is
// taken must still carry exactly the signed order, from its addressee, inside its scope.
#include <ctime>

#include "fuzz.hpp"
#include "hetcast/net/identity.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/order.hpp"
#include "hetcast/runtime/plan_order.hpp"

namespace {

using nlohmann::json;

hetcast::OrderScope scope_of(const json& order) {
    hetcast::ScopedMessage m;
    m.source = order.at("order").at("to").get<std::string>();
    m.name = "a.bin";
    m.dests = order.at("to").get<std::vector<std::string>>();
    return {{m}};
}


struct Reference {
    hetcast::net::ClusterCa ca = hetcast::net::ClusterCa::create("fuzz-cluster");
    std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
    json order;
    json plan;
};

const Reference& reference() {
    static const Reference r = [] {
        Reference r;
        const auto op = r.ca.issue("ops", hetcast::net::Role::operator_);
        r.order = hetcast::sign_order(op, {{"cmd", "push"}, {"files", {"/srv/a.bin"}}, {"to", {"p1", "p2"}}}, "p0", r.now);
        const json plan{
            {"job", 7u},
            {"algorithm", "flat"},
            {"coordinator", "p0"},
            {"chunk", 1u << 20},
            {"participants", {{{"name", "p0"}, {"host", "127.0.0.1"}, {"port", 1u}},
                              {{"name", "p1"}, {"host", "127.0.0.1"}, {"port", 2u}},
                              {{"name", "p2"}, {"host", "127.0.0.1"}, {"port", 3u}}}},
            {"messages", {{{"source", "p0"}, {"size", 5u}, {"sha256", std::string(64, '0')}, {"name", "a.bin"},
                           {"dests", {"p1", "p2"}}, {"origin", ""}, {"mode", 420u}}}},
            {"tasks", {{{"op", "recv"}, {"message", 0u}, {"peer", "p0"}}, {{"op", "send"}, {"message", 0u}, {"peer", "p2"}}}},
            {"order", r.order}};
        const hetcast::JobPlan p = hetcast::job_plan_from_json(plan, std::uint64_t{1} << 30);
        r.plan = hetcast::to_json(p);
        return r;
    }();
    static const bool valid = [] {
        // The unchanged plan must be taken, else every input is refused for nothing.
        const hetcast::JobPlan p = hetcast::job_plan_from_json(r.plan, std::uint64_t{1} << 30);
        try {
            hetcast::check_plan_order(p, r.ca.cert_pem(), {}, scope_of, "p1", r.now);
        } catch (const hetcast::Error& e) {
            fuzz::finding(std::string("the reference plan is refused: ") + e.what());
        }
        return true;
    }();
    (void)valid;
    return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    json patch;
    if (!fuzz::parse_json(data, size, patch)) return 0;
    const Reference& r = reference();
    json j = r.plan;
    j.merge_patch(patch);
    hetcast::JobPlan p;
    if (!fuzz::accepts([&] { p = hetcast::job_plan_from_json(j, std::uint64_t{1} << 30); })) return 0;
    for (const char* me : {"p1", "p2", "p3"}) {
        bool taken = false;
        try {
            hetcast::check_plan_order(p, r.ca.cert_pem(), {}, scope_of, me, r.now);
            taken = true;
        } catch (const hetcast::Error&) {
        } catch (const json::exception&) {
            fuzz::finding("check_plan_order let a JSON exception out");
        }
        if (!taken) continue;
        if (json::parse(p.order) != r.order) fuzz::finding("a plan was taken under an order nobody signed");
        if (p.coordinator != "p0") fuzz::finding("a plan was taken from another coordinator than the order's");
        for (const auto& m : p.messages) {
            if (m.name != "a.bin" || m.source != "p0") fuzz::finding("a plan was taken for another file");
            for (const auto& d : m.dests) {
                if (d != "p1" && d != "p2") fuzz::finding("a plan was taken for a destination the order does not name");
            }
        }
    }
    return 0;
}
