#pragma once
// The member list: which one a daemon starts with (the cluster file or members.yaml), joins
// (through seeds, retried while none answers) and leaves, telling the others, and
// revocations. Methods in service_members.cpp; the map's changes, which need none of its
// state, in service_member_map.cpp.
#include <nlohmann/json.hpp>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "service_core.hpp"
#include "service_probes.hpp"

namespace hetcast::detail {

class MemberList {
public:
    /// The core and the probes outlive this (Service::Impl holds them all).
    MemberList(ServiceCore& core, Probes& probes) : core_(core), probes_(probes) {}

    /// The cluster file's member list or members.yaml's, whichever is newer; a difference is logged.
    std::vector<Member> read_member_list();
    void set_members(std::vector<Member> ms);
    nlohmann::json join(const nlohmann::json& req);
    nlohmann::json leave(const nlohmann::json& req);
    /// An operator's leave order for another operator (`operator: true`): its identity is
    /// revoked here and, with the member list, on every member.
    nlohmann::json revoke_operator(const nlohmann::json& req, const std::string& by);
    /// Adds revocations (a leave here or told by another member) and keeps them. Each new
    /// one must come from an operator's leave order (check_revocation); one that does not
    /// is logged and left out.
    void add_revocations(const std::vector<net::Revocation>& revoked);

    /// Starts joining through the configured seeds on a thread of its own, when there are any.
    void start_joining();
    /// Tells that thread to stop (a join in flight fails once the peer stops).
    void stop_joining();
    /// Waits for that thread, once the peer has stopped.
    void join_seeder();
    /// A member `from` sent a member list naming this daemon (an operator joined it there):
    /// its seeds need not be asked.
    void listed_by_member(const std::string& from);

private:
    /// `order`: the operator's (or a joiner's own) signed request that changed them, which
    /// every member checks before it applies them.
    std::vector<std::string> distribute(const std::vector<Member>& ms, const std::string* map_text,
                                        const nlohmann::json& order);
    /// Revokes the identity an operator's leave order `req` names, the order going with it.
    void revoke_ordered(const nlohmann::json& req);
    /// Empty when joined through a seed, else why the last one failed.
    std::string join_through_seeds();
    /// Runs on `seeder`: join_through_seeds until it works or the service stops, backing off.
    void keep_joining();

    ServiceCore& core_;
    Probes& probes_;
    std::thread seeder;
    std::mutex seed_mu;
    std::condition_variable seed_cv;
    bool seed_stop = false;
    /// A member that sent a member list naming this daemon (an operator joined it there):
    /// its seeds need not be asked. Under seed_mu.
    std::string listed_by;
};

}  // namespace hetcast::detail
