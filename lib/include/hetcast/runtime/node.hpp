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
/// Threads: every member function is thread-safe. start_broadcast, start_multicast,
/// start_exchange and start_push plan at once (planning errors throw there), then run the
/// job on a thread of the Node and return a JobHandle to watch, cancel and wait for it;
/// broadcast, multicast, exchange and push are the same followed by wait(). Several jobs
/// may run at once. Delivery, progress and completion callbacks run on hetcast's threads
/// and must not block: hand the work to a queue of your own.
///
/// Lifetime: a Node can be moved (not copied); a moved-from Node may only be destroyed or
/// assigned to. Destroying a Node (or stop()) aborts its running jobs: their handles stay
/// valid and report the abort.
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

#include "hetcast/map/probe.hpp"
#include "hetcast/runtime/peer.hpp"
#include "hetcast/runtime/push_options.hpp"

namespace hetcast {

using Bytes = std::shared_ptr<const std::vector<std::byte>>;

/// How a job is planned and run: the knobs of `hetcast push` (PushOptions: algo, bwlimit,
/// piece, timeout; checked as the daemon checks them), and callbacks to watch it.
struct SendOptions : PushOptions {
    /// Called on a Node thread whenever the job moves on (as `hetcast push -v` shows it).
    std::function<void(const JobProgress&)> on_progress;
    /// Called on a Node thread once, with the final report, when the job ends.
    std::function<void(const JobReport&)> on_done;
};

/// What start_push sends: one file, or several files and directories as one bundle.
struct PushFiles {
    /// Paths on this node. One regular file without `recursive` lands as a file; anything
    /// else (several paths, a directory) lands as a directory of them (a bundle).
    std::vector<std::filesystem::path> paths;
    bool recursive = false;
    /// Where it lands, relative to each destination's dest_root: the file's or the
    /// bundle's name; empty: the file's own name, or "bundle" for several.
    std::string name;
    bool preserve = true;        ///< modes exactly and modification times
    /// Names or node sets as `hetcast push --to` takes them (`ws[01-40]`, `@subnet:2`; a set
    /// that names this node leaves it out); empty: every other member of the map.
    std::vector<std::string> dests;
};

/// A job a Node runs: progress, cancel, wait. Copies share the job; a handle may outlive
/// its Node (the job was aborted then, and wait() returns that report).
class JobHandle {
public:
    struct State;
    explicit JobHandle(std::shared_ptr<State> state);

    /// The job's id (as its report and Peer::cancel know it); 0 until it has started.
    [[nodiscard]] std::uint64_t id() const;
    /// How far it is, as the coordinator knows it (empty before it starts).
    [[nodiscard]] JobProgress progress() const;
    /// Asks every participant to drop the job; wait() then returns a report whose
    /// undelivered outcomes say "cancelled: WHY". False when the job has already ended.
    bool cancel(const std::string& why = "cancelled by the application");
    [[nodiscard]] bool done() const;
    /// Blocks until the job ends and returns its report (also after cancel()). Rethrows
    /// what the job threw (hetcast::Error when the node could not run it at all).
    JobReport wait() const;
    /// The report once the job has ended, nullopt when `timeout` passes first.
    [[nodiscard]] std::optional<JobReport> wait_for(std::chrono::milliseconds timeout) const;

private:
    std::shared_ptr<State> state_;
};

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
    /// Names or node sets as `hetcast push --to` takes them (`ws[01-40]`, `@subnet:2`; a set
    /// that names this node leaves it out); empty: every other member of the map.
    std::vector<std::string> dests;
};

class Node {
public:
    /// Loads `map_file` and sets `members` when given (InputError for a bad map file).
    explicit Node(NodeConfig config);
    explicit Node(PeerConfig config);
    ~Node();
    Node(Node&&) noexcept;
    Node& operator=(Node&&) noexcept;

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
    /// The map plans are made on now; nullopt before one is set, joined or probed.
    [[nodiscard]] std::optional<Network> map() const;

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
    /// Measures every member (pings, then TCP flows measured together, as `hetcast probe`
    /// does: about a second per member and pass on a LAN), makes the result this node's map,
    /// offers it to the other members (embedded nodes take it; a daemon takes a map only
    /// under an operator's order) and returns it. Blocks; every member must answer:
    /// hetcast::Error names one that does not. InputError for bad options.
    [[nodiscard]] Network probe(ProbeOptions options = {});

    /// `bytes` to every other member of the map that can be reached now; the report's
    /// `skipped` names the others. hetcast::Error when no other member can be reached.
    [[nodiscard]] JobHandle start_broadcast(Bytes bytes, SendOptions options = {});
    /// `bytes` to `dests` (names or node sets, as PushFiles::dests). Algorithms: those of
    /// `hetcast plan --help` (single source). A destination that cannot be reached is left
    /// out of the plan and reported as failed, with the reason; the others still get the data.
    [[nodiscard]] JobHandle start_multicast(Bytes bytes, std::vector<std::string> dests, SendOptions options = {});
    /// Several sources at once (Wu's multi-node multicast): every entry's source must have
    /// offer()ed its buffer under the entry's key on its own Node beforehand (this node's
    /// entries: offered here). Remote buffers are described (size, SHA-256) before planning
    /// and must not change until the job ends. Algorithms: fef, ecf, wr, wrp, exchange, auto.
    /// Destinations that cannot be reached are left out and named in `skipped`.
    [[nodiscard]] JobHandle start_exchange(std::vector<ExchangeEntry> pattern, SendOptions options = {});
    /// Files from this node's disk, in pieces, each verified, landing on every destination
    /// under its dest_root only once its checksum matches, as the daemon's pushes do. The
    /// files must not change until the job ends. InputError for a path that cannot be read
    /// or a name that leaves the destination root.
    [[nodiscard]] JobHandle start_push(PushFiles files, SendOptions options = {});

    /// The blocking forms: start_...(...).wait().
    [[nodiscard]] JobReport broadcast(Bytes bytes, const std::string& algo = "auto");
    [[nodiscard]] JobReport multicast(Bytes bytes, const std::vector<std::string>& dests,
                                      const std::string& algo = "auto");
    [[nodiscard]] JobReport exchange(const std::vector<ExchangeEntry>& pattern, const std::string& algo = "wrp");
    [[nodiscard]] JobReport push(PushFiles files, SendOptions options = {});

    /// Makes `bytes` the body of exchange entries naming this node and `key` (whoever
    /// coordinates the exchange); replaces an earlier offer of the same key.
    void offer(const std::string& key, Bytes bytes);
    void withdraw(const std::string& key);

    /// The next buffer delivered to this node, waiting up to `timeout`.
    [[nodiscard]] std::optional<Delivery> receive(std::chrono::milliseconds timeout);
    /// Deliveries go to `callback` instead of the queue (an empty function: back to the queue).
    void on_delivery(std::function<void(Delivery)> callback);
    /// Every file or tree pushed here (start_push, `hetcast push`), once it has landed under
    /// dest_root, verified: where, from whom, how big. On a Node thread; must not block.
    void on_landed(std::function<void(Landed)> callback);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hetcast
