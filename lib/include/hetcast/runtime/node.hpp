#pragma once
/// hetcast inside an application: a cluster member in your own process, no daemon.
///
///     hetcast::Node node(config);               // name, address, identity, dest_root
///     node.start();
///     node.join(members, map);                  // who is in the cluster, and its network
///     auto report = node.broadcast(bytes);      // planned ("auto"), executed, reported
///     // on every other member:
///     auto d = other.receive(std::chrono::seconds(5));   // (source, job, message, bytes)
///
/// Ownership: a buffer is handed over as shared_ptr<const vector<byte>>. hetcast keeps a
/// reference until the job that sends it ends (an offer()ed buffer: until it is withdrawn
/// or replaced) and never changes it; the caller must not change the bytes either, and may
/// drop its own pointer at any time. Received buffers are shared the same way: one
/// allocation per node, whoever holds the Delivery owns a reference.
///
/// Threads: every member function is thread-safe. broadcast, multicast and exchange block
/// until the job ends (each runs its own job; several may run at once, from any thread).
/// Delivery callbacks run on hetcast's threads and must not block: hand the bytes to a
/// queue of your own for long work.
///
/// Errors: InputError for a request that cannot be planned (unknown member, no map, a
/// source that offered nothing under a key, a null buffer); hetcast::Error when this node
/// cannot bind. A destination that fails or leaves during a job does not throw: the report
/// names it and why (JobReport::ok() is false, its outcome carries the error).
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hetcast/runtime/peer.hpp"

namespace hetcast {

using Bytes = std::shared_ptr<const std::vector<std::byte>>;

/// How to build a Node: its peer settings and, optionally, the cluster it starts in.
struct NodeConfig {
    PeerConfig peer;
    /// A network file (node names = member names) loaded as the map; see Node::load_map.
    std::optional<std::filesystem::path> map_file;
    /// The address book; see Node::set_members.
    std::vector<Member> members;
};

/// A NodeConfig from a daemon config file (conf/hetcastd.yaml): name, listen address,
/// dest_root, identity (read here), chunk, limits, link_profile, the cluster file as
/// members, and state_dir/map.yaml as the map when it exists (spool: state_dir/spool).
/// Throws InputError as load_daemon_config and read_identity do.
[[nodiscard]] NodeConfig load_node_config(const std::filesystem::path& daemon_config);

/// One message of an exchange: `source` multicasts what it offered under `key`.
struct ExchangeEntry {
    std::string source;
    std::string key;
    std::vector<std::string> dests;  ///< empty: every other member of the map
};

class Node {
public:
    /// Loads `map_file` and sets `members` when given (InputError for a bad map file).
    explicit Node(NodeConfig config);
    explicit Node(PeerConfig config);
    ~Node();
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;

    /// Binds and serves (port 0 picks a free port). Throws hetcast::Error when it cannot bind.
    void start();
    void stop();
    [[nodiscard]] std::uint16_t port() const;
    [[nodiscard]] const std::string& name() const;

    /// The address book used to reach other members (replaces the previous one).
    void set_members(std::vector<Member> members);
    [[nodiscard]] std::vector<Member> members() const;
    /// The network plans are made on (node names = member names; a measured map from
    /// `hetcast probe`, or any network file). InputError when this node is not in it.
    void set_map(Network map);
    void load_map(const std::filesystem::path& map_file);

    /// Both at once, checked against each other: InputError for a member not in the map.
    void join(std::vector<Member> members, Network map);
    /// The same from files: a cluster file (conf/cluster.yaml) and a network file.
    void join(const std::filesystem::path& cluster_file, const std::filesystem::path& map_file);
    /// Through a running member (a hetcastd) at host:port, as `hetcastd --join` does: it
    /// admits this node, measures it against every member, re-partitions the map and tells
    /// everyone; the member list and map come back. Later membership and map changes reach
    /// this node too. Call after start(). hetcast::Error when the seed cannot be reached or
    /// refuses.
    void join(const std::string& seed_host, std::uint16_t seed_port);

    /// `bytes` to every other member of the map that can be reached now; the report's
    /// `skipped` names the others. hetcast::Error when no other member can be reached.
    [[nodiscard]] JobReport broadcast(Bytes bytes, const std::string& algo = "auto");
    /// `bytes` to `dests`. Algorithms: those of `hetcast plan --help` (single source). A
    /// destination that cannot be reached is left out of the plan and reported as failed,
    /// with the reason; the others still get the data.
    [[nodiscard]] JobReport multicast(Bytes bytes, const std::vector<std::string>& dests,
                                      const std::string& algo = "auto");
    /// Several sources at once (Wu's multi-node multicast): every entry's source must have
    /// offer()ed its buffer under the entry's key on its own Node beforehand (this node's
    /// entries: offered here). Remote buffers are described (size, SHA-256) before planning
    /// and must not change until the job ends. Algorithms: fef, ecf, wr, wrp, auto.
    /// Destinations that cannot be reached are left out and named in `skipped`.
    [[nodiscard]] JobReport exchange(const std::vector<ExchangeEntry>& pattern, const std::string& algo = "wrp");

    /// Makes `bytes` the body of exchange entries naming this node and `key` (whoever
    /// coordinates the exchange); replaces an earlier offer of the same key.
    void offer(const std::string& key, Bytes bytes);
    void withdraw(const std::string& key);

    /// The next buffer delivered to this node, waiting up to `timeout`.
    [[nodiscard]] std::optional<Delivery> receive(std::chrono::milliseconds timeout);
    /// Deliveries go to `callback` instead of the queue (an empty function: back to the queue).
    void on_delivery(std::function<void(Delivery)> callback);

private:
    [[nodiscard]] Network map() const;
    void serve_requests();
    /// The members of `names` that cannot be reached now, with why.
    [[nodiscard]] std::map<std::string, std::string> unreachable(const std::vector<std::string>& names);

    std::string host_;  ///< the address this node gives a seed when it joins
    std::pair<Overhead, Overhead> overheads_;  ///< send and receive, from the link profile
    Peer peer_;
    mutable std::mutex mu_;
    std::optional<Network> map_;
    std::map<std::string, std::shared_ptr<const net::MessageBody>, std::less<>> offers_;
};

}  // namespace hetcast
