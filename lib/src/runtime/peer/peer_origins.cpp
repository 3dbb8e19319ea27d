// What a member reads for a job (runtime/body.hpp, files.hpp), and what it does only under
// an operator's order (runtime/order.hpp): read one of its files for another member, and
// take part in a job another member plans.
#include "peer_origins.hpp"

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/order.hpp"
#include "hetcast/runtime/pieces.hpp"
#include "hetcast/runtime/plan_order.hpp"

namespace hetcast::detail {
namespace fs = std::filesystem;
using json = nlohmann::json;

void Origins::offer(const std::string& key, std::shared_ptr<const net::MessageBody> body) {
    std::lock_guard lock(mu_);
    offers_[key] = std::move(body);
}

void Origins::withdraw(const std::string& key) {
    std::lock_guard lock(mu_);
    offers_.erase(key);
}

std::shared_ptr<const net::MessageBody> Origins::generated(const std::string& origin) {
    std::uint64_t size = 0, seed = 0;
    char extra = 0;
    if (std::sscanf(origin.c_str(), "gen:%lu:%lu%c", &size, &seed, &extra) != 2) {
        throw InputError("bad origin '" + origin.substr(0, 40) + "' (gen:SIZE:SEED)");
    }
    if (size > (std::uint64_t{1} << 30)) throw InputError("generated payloads are at most 1 GiB");
    return make_generated_body(size, seed);  // made as it is read, never held whole
}

std::shared_ptr<const net::MessageBody> Origins::resolve(const std::string& origin) {
    if (origin.rfind("offer:", 0) == 0) {
        std::lock_guard lock(mu_);
        const auto it = offers_.find(origin.substr(6));
        if (it == offers_.end()) throw InputError("'" + cfg_.name + "' offers nothing as '" + origin.substr(6) + "'");
        return it->second;
    }
    if (origin.rfind("file:", 0) == 0) {
        // Refused at the member that would read it, before anything is sent.
        const fs::path file = origin.substr(5);
        if (!file.is_absolute()) throw InputError("file origin '" + file.string() + "' is not absolute");
        return std::make_shared<FileBody>(file, &cfg_.serve_roots);
    }
    if (origin.rfind("gen:", 0) == 0) return generated(origin);
    throw InputError("unknown origin '" + origin.substr(0, 40) + "'");
}

void Origins::authorize_read(const std::string& origin, const std::string& order, const std::string& via) const {
    if (origin.rfind("file:", 0) != 0) return;
    const std::string path = origin.substr(5);
    const auto refuse = [&](const std::string& why) {
        return InputError("'" + cfg_.name + "' reads '" + path + "' for '" + via + "' only with an operator's order naming it: " + why);
    };
    if (order.empty()) throw refuse("there is none");
    const json req = json::parse(order, nullptr, false);
    const std::vector<net::Revocation> revoked = revocations_.all();
    try {
        (void)check_order(req, cfg_.identity.ca_pem, revoked, via, static_cast<std::int64_t>(std::time(nullptr)));
    } catch (const InputError& e) {
        throw refuse(e.what());
    }
    if (!order_names_file(req, cfg_.name, path)) throw refuse("the order has no entry with this source and file");
}

void Origins::authorize_plan(const JobPlan& plan) const {
    if (!cfg_.order_scope) return;
    const std::vector<net::Revocation> revoked = revocations_.all();
    try {
        check_plan_order(plan, cfg_.identity.ca_pem, revoked, cfg_.order_scope, cfg_.name,
                         static_cast<std::int64_t>(std::time(nullptr)));
    } catch (const std::exception& e) {
        // Nothing was prepared: no file is created, and the start and data of this job find
        // none. on_frame logs this and closes the connection with it as the reason (an error
        // frame), which the coordinator reports for this member.
        throw InputError("refused job " + std::to_string(plan.job) + ": " + e.what());
    }
}

json Origins::describe(const json& req, const std::string& who) {
    // An origin this peer does not have is an answer, not a reason to drop the caller.
    try {
        authorize_read(req.value("origin", ""), req.contains("order") ? req["order"].dump() : std::string(), who);
        const auto body = resolve(req.value("origin", ""));
        json a{{"ok", true}, {"size", body->size()}, {"sha256", net::to_hex(body->sha256())}, {"mode", mode_of(*body)}};
        if (const std::uint64_t piece = req.value("piece", std::uint64_t{0}); piece > 0) {
            if (piece < min_piece || piece > max_piece) throw InputError("piece must be 4 KiB to 8 MiB");
            json pieces = json::array();
            for (const auto& d : piece_digests(*body, piece)) pieces.push_back(net::to_hex(d));
            a["pieces"] = std::move(pieces);
        }
        return a;
    } catch (const std::exception& e) {
        return {{"ok", false}, {"error", e.what()}};
    }
}

}  // namespace hetcast::detail
