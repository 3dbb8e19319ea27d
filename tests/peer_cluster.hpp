#pragma once
// In-process peers on loopback for the Peer tests: p0, p1, ... each with its own identity
// and destination under one temporary folder, members of each other; every log line kept.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hetcast/runtime/peer.hpp"
#include "identity.hpp"
#include "temp_dir.hpp"

namespace hetcast::test {

struct PeerCluster {
    TempDir dir;
    std::vector<std::unique_ptr<Peer>> peers;

    /// `configure` sees each peer's config (by index) after the defaults, before it starts.
    explicit PeerCluster(std::size_t n, const std::function<void(std::size_t, PeerConfig&)>& configure = {}) {
        std::vector<Member> members;
        for (std::size_t i = 0; i < n; ++i) {
            PeerConfig c;
            c.name = name(i);
            c.identity = identity(c.name);
            c.dest_root = dir.path / c.name;
            c.connect_timeout = std::chrono::milliseconds(3000);
            c.log = [this, name = c.name](LogLevel, const std::string& line) {
                std::lock_guard lock(mu_);
                logs_.push_back(name + ": " + line);
            };
            if (configure) configure(i, c);
            peers.push_back(std::make_unique<Peer>(c));
            peers.back()->start();
            members.push_back({c.name, "127.0.0.1", peers.back()->port()});
        }
        for (auto& p : peers) p->set_members(members);
    }
    ~PeerCluster() {
        for (auto& p : peers) p->stop();
    }
    PeerCluster(const PeerCluster&) = delete;
    PeerCluster& operator=(const PeerCluster&) = delete;

    /// The name of peer `i`.
    [[nodiscard]] static std::string name(std::size_t i) { return "p" + std::to_string(i); }

    /// Every line logged so far, each starting "pN: ".
    [[nodiscard]] std::vector<std::string> logs() const {
        std::lock_guard lock(mu_);
        return logs_;
    }

    /// Whether some peer logged a line containing `what` ("pN: " starts each line).
    [[nodiscard]] bool logged(const std::string& what) const {
        std::lock_guard lock(mu_);
        for (const auto& l : logs_) {
            if (l.find(what) != std::string::npos) return true;
        }
        return false;
    }

private:
    mutable std::mutex mu_;
    std::vector<std::string> logs_;
};

}  // namespace hetcast::test
