#pragma once
// The members this peer knows (name, host, port) and the control connection kept with
// each: what a request, a ping or a job's plan goes out on. The peer's Connections holds one.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/wire.hpp"

namespace hetcast::detail {

/// Thread safe.
class MemberDirectory {
public:
    /// Replaces the member list; hands back the connections kept with members that left
    /// or moved (another host or port), forgotten here, for the caller to close.
    [[nodiscard]] std::vector<net::ConnectionPtr> set(std::vector<Member> members);
    [[nodiscard]] std::vector<Member> list() const;
    [[nodiscard]] std::optional<Member> find(const std::string& name) const;
    /// Whether it knows `name`, and whether it knows any member but `self`.
    [[nodiscard]] bool knows(const std::string& name) const;
    [[nodiscard]] bool knows_other_than(const std::string& self) const;
    /// The control connection kept with `name`; null when there is none.
    [[nodiscard]] net::ConnectionPtr connection(const std::string& name) const;
    void keep(const std::string& name, net::ConnectionPtr c);
    /// `c` closed: forgotten if it is the one kept with `name`.
    void closed(const std::string& name, const net::ConnectionPtr& c);
    /// Held while dialling `name`, so that one connect at a time goes to each member (a
    /// member that does not answer holds up only those who want it).
    [[nodiscard]] std::shared_ptr<std::mutex> dial_lock(const std::string& name);

private:
    mutable std::mutex mu_;
    std::map<std::string, Member> members_;
    std::map<std::string, net::ConnectionPtr> kept_;
    std::map<std::string, std::shared_ptr<std::mutex>> dialling_;
};

}  // namespace hetcast::detail
