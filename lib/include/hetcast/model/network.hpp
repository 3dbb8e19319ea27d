#pragma once
/// The cost model of a network of workstations (Bhat §3.1, Wu §2).
///
/// time(i→j, m) = S_i(m) + L_ij + m / B_ij + R_j(m)
///   S_i(m) = s_i + s'_i·m   send overhead: the sender is busy for it
///   L_ij + m / B_ij         on the wire
///   R_j(m) = r_j + r'_j·m   receive overhead: the receiver is busy for it
///
/// A cost-matrix network (the papers' worked examples) is size independent:
/// sending i→j takes C_ij, the sender is busy for all of it, and there is no
/// separate wire or receive time.
///
/// Shared capacities (optional, docs/model.md "Shared capacities"): a host's NIC sends at
/// most `egress` and receives at most `ingress` in all, a subnet's uplink carries at most
/// `uplink` out of and into the subnet (each direction), and a destination writes at most
/// `disk` — whatever the number of transfers that share them. The pair bandwidth B_ij then
/// caps each single transfer i→j (one TCP stream) and the capacities cap their sums.
///
/// A Network is an immutable value once built; it is safe to share between threads.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hetcast {

using NodeId = std::uint32_t;
using Matrix = std::vector<std::vector<double>>;
/// A partition of node ids into subnets (clusters).
using Subnets = std::vector<std::vector<NodeId>>;

struct Overhead {
    double fixed = 0.0;     ///< seconds
    double per_byte = 0.0;  ///< seconds per byte
    [[nodiscard]] double at(double bytes) const { return fixed + per_byte * bytes; }
};

/// How the link ends queue (docs/model.md, "Sharing on FIFO links"). `realistic`: each
/// host's own egress is fair per flow (Linux's fq_codel), switch ports to hosts and uplinks
/// are FIFOs, as on a physical LAN; `fifo`: every link end is a FIFO; `fair`: every one is
/// fair, and the flow model shares them max-min.
enum class Queues { realistic, fifo, fair };

/// Bytes per second; infinity where a resource does not constrain.
struct Capacities {
    std::vector<double> egress;   ///< per node
    std::vector<double> ingress;  ///< per node
    std::vector<double> disk;     ///< per node: write rate of a destination
    std::vector<double> uplink;   ///< per subnet of the subnet map, in its order; empty: none
    Queues queues = Queues::realistic;
};

class Network {
public:
    /// Whole-message costs; `cost[i][j]` is the time to send from i to j (diagonal ignored).
    /// Throws InputError on a non-square matrix, a negative or non-finite cost, or bad names.
    [[nodiscard]] static Network from_costs(std::vector<std::string> names, Matrix cost);

    /// Parametric form. `latency` in seconds, `bandwidth` in bytes/s (diagonals ignored);
    /// `send` and `recv` hold one overhead per node.
    [[nodiscard]] static Network parametric(std::vector<std::string> names, Matrix latency,
                                            Matrix bandwidth, std::vector<Overhead> send,
                                            std::vector<Overhead> recv);

    /// Khuller's cluster model: cost `local` inside a cluster, `global` across;
    /// nodes are named c<i>n<j>; the clusters become the subnet map; root c0n0.
    [[nodiscard]] static Network clusters(const std::vector<std::size_t>& sizes, double local,
                                          double global);

    [[nodiscard]] std::size_t size() const { return names_.size(); }
    [[nodiscard]] const std::string& name(NodeId n) const { return names_.at(n); }
    [[nodiscard]] const std::vector<std::string>& names() const { return names_; }
    [[nodiscard]] std::optional<NodeId> find(std::string_view name) const;
    /// Like find(), but throws InputError("unknown node 'x'").
    [[nodiscard]] NodeId id(std::string_view name) const;

    [[nodiscard]] bool is_cost_matrix() const { return !cost_.empty(); }

    /// Time the sender is busy handing an m-byte message to the network (S_i(m), or C_ij).
    [[nodiscard]] double send_busy(NodeId i, NodeId j, double m) const;
    /// Time on the wire after the send overhead (L_ij + m/B_ij; 0 for cost matrices).
    [[nodiscard]] double wire(NodeId i, NodeId j, double m) const;
    /// Time the receiver is busy taking the message off the network (R_j(m); 0 for cost matrices).
    [[nodiscard]] double recv_busy(NodeId j, double m) const;
    /// Whole transfer time i→j of an m-byte message (C_ij for cost matrices).
    [[nodiscard]] double time(NodeId i, NodeId j, double m) const {
        return send_busy(i, j, m) + wire(i, j, m) + recv_busy(j, m);
    }
    /// time(i, j, m) for every ordered pair, zero diagonal.
    [[nodiscard]] Matrix cost_matrix(double m) const;

    /// The latency matrix of a parametric network, empty otherwise.
    [[nodiscard]] const Matrix& latency() const { return latency_; }
    [[nodiscard]] const Matrix& bandwidth() const { return bandwidth_; }
    [[nodiscard]] const std::vector<Overhead>& send_overheads() const { return send_; }
    [[nodiscard]] const std::vector<Overhead>& recv_overheads() const { return recv_; }

    /// A subnet map given with the network (the file's `subnets`, or the cluster model's clusters).
    [[nodiscard]] const std::optional<Subnets>& subnets() const { return subnets_; }
    /// Throws InputError unless `s` partitions the nodes. A partition other than the
    /// current one drops the uplink capacities (they belong to the old subnets).
    void set_subnets(Subnets s);

    /// The node a plan starts from when none is named (the first node, or c0n0).
    [[nodiscard]] NodeId default_root() const { return default_root_; }

    /// Per-node time to broadcast inside the node's subnet, when given (paper 004's T).
    [[nodiscard]] const std::vector<double>& local_broadcast() const { return local_broadcast_; }
    void set_local_broadcast(std::vector<double> t);

    /// Per-subnet degree d_i of lcf-degree (Khuller §5.1), in subnet-map order, when given.
    [[nodiscard]] const std::vector<std::size_t>& degrees() const { return degrees_; }
    /// Throws InputError unless there is a subnet map and one degree of at least 1 per subnet.
    void set_degrees(std::vector<std::size_t> d);

    /// Shared capacities, when the network has them (a probed map, a netlab topology).
    [[nodiscard]] const std::optional<Capacities>& capacities() const { return capacities_; }
    /// Throws InputError unless every list has one positive rate per node (per subnet for
    /// `uplink`, which needs a subnet map; an empty `uplink` means no uplink constraint).
    /// Only parametric networks have capacities.
    void set_capacities(Capacities c);
    /// The subnet index of every node (its position in subnets()); every node 0 without a map.
    [[nodiscard]] std::vector<std::size_t> subnet_of() const;

    /// The same network with every host sending at most `rate` bytes/s in all (a push's
    /// --bwlimit): each pair bandwidth and each egress capacity capped at `rate`. Given
    /// local broadcast times no longer hold and are dropped. Throws InputError for a cost
    /// matrix (it has no rates) or a rate that is not positive and finite.
    [[nodiscard]] Network with_rate_limit(double rate) const;

private:
    Network() = default;
    void set_names(std::vector<std::string> names);

    std::vector<std::string> names_;
    Matrix cost_;
    Matrix latency_;
    Matrix bandwidth_;
    std::vector<Overhead> send_;
    std::vector<Overhead> recv_;
    std::optional<Subnets> subnets_;
    std::vector<double> local_broadcast_;
    std::vector<std::size_t> degrees_;
    std::optional<Capacities> capacities_;
    NodeId default_root_ = 0;
};

}  // namespace hetcast
