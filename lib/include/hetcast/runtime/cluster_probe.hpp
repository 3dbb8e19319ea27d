#pragma once
/// Measuring a cluster of members (`hetcast probe`, Node::probe): latency by pings, then
/// the goodputs of TCP flows measured together, from which map/probe.hpp infers subnets and
/// capacities (docs/protocol.md, "Probing"). The daemon and the embedded node share it;
/// each sends the requests its own way and answers the member's side with answer_goodput.
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hetcast/map/probe.hpp"
#include "hetcast/model/network.hpp"
#include "hetcast/runtime/nic_queue.hpp"
#include "hetcast/runtime/peer.hpp"

namespace hetcast {

/// How a prober reaches the members it measures.
struct ProbeLink {
    std::string self;  ///< the prober's own member name
    /// Sends `req` to `member` and returns its answer; for `self`, answers it locally
    /// ("ping", "goodput", "hello"). Throws hetcast::Error when the member cannot be asked.
    std::function<nlohmann::json(const std::string& member, const nlohmann::json& req, std::chrono::milliseconds timeout)>
        call;
    /// A line for the log (a flow measured again, and why); may be empty.
    std::function<void(const std::string&)> note;
};

/// Where a probe's wall-clock time went, seconds.
struct ProbeTimes {
    double latency = 0;    ///< pinging the pairs
    double setup = 0;      ///< measurements: every receiver dialling its sender
    double measuring = 0;  ///< measurements: from the start request to the last answer
    /// Of `measuring`: until the last flow of each measurement had its first bytes, and
    /// from the last flow's last bytes to the last answer (the prober's clock, by offsets).
    double first_bytes = 0, answers = 0;
    double other = 0;      ///< the rest of measure_cluster: the probe's own work, the hellos
};

struct MeasuredCluster {
    Network network;     ///< latency, bandwidth, overheads, subnets and capacities, on `names`
    ProbeResult result;  ///< what the probe found and how (notes, doubts, measurements)
    std::map<std::string, double> offsets;  ///< each member's clock minus the prober's, seconds
    ProbeTimes times;
};

/// Measures `names` (the prober among them): `reps` pings per pair, then probe_capacities
/// with `options` (its names are set here); `progress` gets {"progress": {...}} lines.
/// Throws InputError for bad options, hetcast::Error when a member does not answer.
[[nodiscard]] MeasuredCluster measure_cluster(const ProbeLink& link, const std::vector<std::string>& names, int reps,
                                              ProbeOptions options,
                                              const std::function<void(const nlohmann::json&)>& progress = {});

struct MeasuredJoin {
    Network network;  ///< the old map with the joiner last: its subnet, NICs, latency, overheads
    JoinResult result;
    std::size_t pinged = 0;  ///< members that pinged it: one per subnet
};

/// Whether `old` is a probed map `joiner` can join by measure_join(): subnets, capacities,
/// and exactly the members `names` (the joiner aside, in or out of it).
[[nodiscard]] bool joinable(const Network& old, const std::vector<std::string>& names, const std::string& joiner);

/// A member joining a probed map (joinable()): measured against representatives of each
/// subnet instead of every member. One member per subnet (its fastest receiver) pings it
/// (`reps` pings); probe_join() places it with a flow to and one from each subnet's fastest
/// members, subnet by subnet until a reading places it: O(subnets) measurements of two
/// flows. Its latency to a subnet's members is its representative's, its bandwidth what
/// its NICs and the uplinks allow. Throws InputError when `old` is not joinable,
/// hetcast::Error when a member does not answer or no reading told anything.
[[nodiscard]] MeasuredJoin measure_join(const ProbeLink& link, const Network& old, const std::string& joiner, int reps,
                                        ProbeOptions options);

struct MeasuredUplink {
    Network network;  ///< the old map, that uplink (both, with two subnets) and the pairs across it replaced
    UplinkResult result;
    std::size_t subnet = 0;  ///< the index in the map's subnets of `member`'s subnet
};

/// The uplink of `member`'s subnet measured again on a probed map (subnets, capacities, two
/// subnets at least; probe_uplink()): clock offsets by `reps` pings of the members the flows
/// name, O(subnet) flows in two passes. Pairs across that uplink get what the NICs and the
/// uplinks allow; everything else is kept. Throws InputError for a map it cannot refresh,
/// hetcast::Error when a member does not answer.
[[nodiscard]] MeasuredUplink measure_uplink(const ProbeLink& link, const Network& old, const std::string& member,
                                            int reps, ProbeOptions options);

/// What the members' own NICs say of the map's queues (capacity.queues) and a note saying
/// why: fifo when more than half of those that could tell send through FIFOs, realistic
/// (fair host NICs, FIFO switches) when fewer; nullopt when none could tell. measure_cluster
/// asks every member's hello for it.
[[nodiscard]] std::optional<std::pair<Queues, std::string>> queues_of(const std::vector<NicQueue>& nics,
                                                                      const std::vector<std::string>& names);

/// A member's side of a goodput measurement: {"cmd": "goodput", "from", "seconds"}, or in
/// two steps {"connect": true} then {"connection", "seconds"}. Throws InputError for a bad
/// request, hetcast::Error when the transfer fails.
[[nodiscard]] nlohmann::json answer_goodput(Peer& peer, const std::string& self, const nlohmann::json& req);

}  // namespace hetcast
