#pragma once
// What a member reads for a job, and under whose order: the bodies an origin names here
// (an offered buffer, a file, a generated payload), and the operator's orders without
// which it reads no file for another member and takes part in no job another plans
// (runtime/order.hpp, runtime/plan_order.hpp).
#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/peer_types.hpp"
#include "../cluster/revocations.hpp"

namespace hetcast::detail {

class Origins {
public:
    /// `cfg` and `revocations` outlive this (Peer::Impl holds all three).
    Origins(const PeerConfig& cfg, const RevocationList& revocations) : cfg_(cfg), revocations_(revocations) {}

    void offer(const std::string& key, std::shared_ptr<const net::MessageBody> body);
    void withdraw(const std::string& key);
    /// "gen:SIZE:SEED": a test payload of SIZE pseudo-random bytes, the same for a given
    /// seed, made as it is read (at most 1 GiB; never held whole).
    static std::shared_ptr<const net::MessageBody> generated(const std::string& origin);
    /// The body an origin names on this peer. Throws InputError when there is none.
    std::shared_ptr<const net::MessageBody> resolve(const std::string& origin);
    /// A `file:` origin is read for another member only with an operator's order given to
    /// that member (`via`) and naming this member and file. Throws InputError.
    void authorize_read(const std::string& origin, const std::string& order, const std::string& via) const;
    /// With PeerConfig::order_scope, a plan is taken only under an operator's order that
    /// covers it (check_plan_order); throws InputError("refused job ID: why").
    void authorize_plan(const JobPlan& plan) const;
    /// The answer to {"cmd": "describe"} from `who`: size, digest, mode (and piece digests)
    /// of an origin here, or why not. Hashes the whole body: never on the I/O thread.
    nlohmann::json describe(const nlohmann::json& req, const std::string& who);

private:
    const PeerConfig& cfg_;
    const RevocationList& revocations_;
    std::mutex mu_;
    std::map<std::string, std::shared_ptr<const net::MessageBody>> offers_;
};

}  // namespace hetcast::detail
