#pragma once
/// Finding subnets and shared capacities from concurrent bulk transfers (docs/protocol.md,
/// "Probing"). ECO (Lowekamp & Beguelin §3–4) partitions on latency; inside one machine
/// room round trips differ by microseconds while rates differ by 5×, so this partitions on
/// what the NICs and uplinks let through: goodputs of TCP flows measured together.
///
/// The algorithm is a pure function: it drives every measurement through a callback, so it
/// runs the same against daemons and against a synthetic network (the flow model).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hetcast/model/network.hpp"

namespace hetcast {

using FlowPair = std::pair<NodeId, NodeId>;

/// Runs the flows (from, to) together for about `seconds`; returns each one's goodput
/// (bytes/s), in order. A flow it could not rate (it starved: too little arrived in its
/// window, or its transfer failed after its hosts connected) is 0 or NaN: the probe
/// measures it again. Throws hetcast::Error when it cannot measure at all (a host is down).
using MeasureFlows = std::function<std::vector<double>(const std::vector<FlowPair>& flows, double seconds)>;

struct ProbeOptions {
    /// ECO's tolerance; also how far a rate must fall short of what the NICs allow before
    /// something between the hosts counts as limiting it.
    double tolerance = 0.2;
    int repeats = 3;          ///< passes over every measurement; medians count
    double seconds = 0.3;     ///< per measurement
    double message = 1 << 20; ///< bytes: the representative message of the partition's cost
    /// Node names for the notes; empty: node numbers.
    std::vector<std::string> names;
    /// Called before each measurement with its phase ("pairs", "uplinks", "placing"; structure
    /// first: "blocks", "groups", "joining", "nics") and the number of measurements made so far.
    std::function<void(std::string_view phase, std::size_t done)> progress;
    /// From this many hosts on, probe_capacities() finds the structure first
    /// (probe_structure()); below, it measures every pair. 0: never structure first.
    std::size_t structure_hosts = 21;
    /// false: probe_structure() leaves goodput and bandwidth empty (at 5000 hosts the two
    /// n × n matrices are 400 MB); the subnets and capacities are the map.
    bool pair_matrices = true;
    /// The hosts' own NICs queue in FIFOs (runtime/nic_queue.hpp): a host that sends and
    /// receives at once slows both ways (each flow's ACKs wait behind the other's data), so
    /// the rounds between rate classes (step 9) send one way at a time.
    bool fifo_nics = false;
    /// May be empty. Called with the flows of the measurement probe_structure() makes after
    /// the one it is about to make, so that a prober can set them up (dial) meanwhile; a
    /// hint only, as the flows of any call of `measure` are unknown before it.
    std::function<void(const std::vector<FlowPair>& next)> prepare;
    /// May be empty. Pings the pairs (from, to), all at once; each one-way latency in
    /// seconds, NaN when it could not be measured. probe_structure() asks for the pairs it
    /// places a host by (step d) that its latency matrix leaves NaN (a site pings a sample
    /// of its pairs: all of them cost n^2/2 connections).
    std::function<std::vector<double>(const std::vector<FlowPair>& pairs)> ping;
    /// May be empty. Called after each measurement with its phase, its flows and the rate
    /// each was read at (bytes/s; NaN: not rated): what `hetcast probe --trace` writes.
    std::function<void(std::string_view phase, const std::vector<FlowPair>& flows, const std::vector<double>& rates)> record;
};

struct ProbeResult {
    Matrix goodput;          ///< median per ordered pair, measured in rounds of disjoint pairs
    Matrix bandwidth;        ///< B_ij: what one stream i→j gets alone
    Subnets subnets;         ///< ordered by lowest member, members ascending (like ECO's)
    Capacities capacities;   ///< egress, ingress per node; disk infinite; uplink per subnet
    /// Per subnet (same order): empty when the measurements place every host of it, else why
    /// it may be wrong (a host placed with it by affinity and latency alone, step 7).
    std::vector<std::string> doubts;
    std::vector<std::string> notes;
    /// Ordered pairs no measurement could rate; their goodput and bandwidth are estimated.
    std::vector<FlowPair> unmeasured;
    std::size_t measurements = 0;  ///< calls of the callback
    double measured_seconds = 0;   ///< their durations summed
    std::size_t flows = 0;         ///< flows in those calls, summed: what the probe loads the network with
};

/// Measures `names.size()` hosts (at least 2) through `measure`; `latency` (seconds, n×n)
/// comes from pings. Throws InputError for bad options or latency, hetcast::Error when the
/// callback throws, returns a wrong number of rates or a negative or infinite rate, or
/// when no flow out of (or into) some host could be rated at all.
/// 1. Pair goodputs: in round r (1 ≤ r < n) every host i sends to i + r (mod n) at once:
///    each NIC carries one flow out and one in (they are separate), no host pair both
///    ways (for even n the round r = n/2 is split in two); `repeats` passes, the median per
///    ordered pair. A flow not rated in some pass is measured again, `repeats` passes each
///    time, in rounds of half the size of its own (packed like the rounds), then of half
///    that, down to alone, where one rated pass of the `repeats` is enough; the readings
///    of the smallest round that rated it count. A pair not rated even alone is listed in
///    `unmeasured` with a note, and left out of steps 2–7; its goodput and bandwidth are
///    then what the map allows it alone: min(egress_i, ingress_j, the uplinks on the way).
///    When every flow is rated (the normal case) this costs nothing.
/// 2. NIC rates: egress_i the median of the G_ij within tolerance/4 of max_j G_ij (the
///    pairs only the NICs limit), ingress_j likewise over G_ij of all i.
/// 3. The cost of a pair: the time to move `message` over what the NICs allow,
///    L_ij·r/m + r/Ĝ_ij with r = min(eg_i, in_j) and Ĝ_ij the pair's largest reading (on
///    FIFO links an uneven split, or a host's ACKs queued behind its own data, lowers some
///    readings, never raises one), the larger of both directions: 1 when
///    only the endpoints' NICs limit the pair (latency aside), more when something between
///    them does. A host that sends slowly is NIC-bound towards everyone, but what it
///    receives from afar is not: the larger direction tells. A direction not measured
///    leaves the other; a pair measured neither way costs the least, over third hosts k,
///    of max(cost_ik, cost_kj).
/// 4. A host near two hosts that are not near each other (ECO's test: within 1 + tolerance
///    of both hosts' cheapest edge) is NIC-bound on both sides of an uplink and tells
///    nothing by its rates; such hosts are set aside, the worst first, until none is left.
/// 5. ECO over the other hosts on that cost.
/// 6. Uplinks: per subnet, as many flows out of it as it has hosts (at least 3) and as many
///    into it, at once; the larger aggregate, unless the NICs alone explain it (then infinite). A flow a pass did not
///    rate counts for nothing in that pass's aggregate (the others took its share).
/// 7. A host that receives more than 1 + tolerance times faster than it sends may have
///    received slower still in the rounds, where it also sent (with a FIFO queue at its NIC
///    its ACKs wait behind its own data): its ingress is measured again, receiving only —
///    for a host set aside, a flow from the fastest sender of each subnet at once (two
///    passes, the one that carried the most counts); for the others that also receive
///    1 + tolerance times slower than the median of their subnet, all such hosts at once,
///    each from the fastest sender of its own subnet that receives nothing then (one pass).
///    Those readings replace the rounds' flows into it; its ingress is at least their sum.
///    Each host set aside is placed first by its rates, what it receives and what it sends
///    each on its own: per candidate subnet, the model (NICs, uplinks found, the host behind
///    that uplink) predicts every pair flow out of and into the host in the round it was
///    measured in; a rate more than `tolerance` off the prediction contradicts the
///    candidate. A slow sender is NIC-bound outwards wherever it is, but it receives from
///    its own subnet at NIC speed and from the others at most at their uplinks' rate: only
///    its own subnet fits. The candidate with the fewest contradictions places the host
///    when every other has more than twice as many, plus one. A slow sender left in doubt
///    (received at once, its flows share its ingress evenly when the uplinks allow more)
///    gets a second look: a flow from each of the two likeliest subnets alone, one pass;
///    still in doubt, it goes by affinity and latency (its flows load no uplink enough for
///    a sharing test). Else (a host slow both ways fits everywhere, unless its round's flows
///    shared an uplink) a sharing test decides among those within that: a flow out of (and one into) a candidate subnet, measured alone
///    and together with the host's flows to (and from) another subnet, through none of the
///    watched flows' hosts where that subnet has others; a drop means the
///    host is behind that subnet's uplink. The two of them with the best affinity
///    (then latency) are tested; when neither shows sharing the first is taken and a note
///    says so. A pass in which some flow was not rated says nothing.
///    7b. Then, when the uplink of the subnet it went to is known: a flow out of that subnet
///    alone, and beside a flow from another of its hosts to the host. From inside nothing
///    of that crosses the uplink; from behind an uplink of its own (35 Mbit/s behind 30,
///    reading like a slow host anywhere) the watched flow drops: the host becomes a subnet
///    of its own, which 6b keeps. No drop once, or a drop not seen twice: it stays.
/// 8. B_ij: the median for pairs inside a subnet; min(eg_i, in_j, uplinks on the way) across.
///    Inside a subnet, a pair into a host whose ingress 7a measured receiving only, read
///    while that host sent, is at least min(eg_i, in_j): behind a FIFO NIC the host's ACKs
///    waited behind its own data. Other pairs keep their readings (behind FIFO NICs they
///    carry what the capacities do not).
/// 9. Uplinks no single flow fills (faster than any one host's flow through them, slower
///    than their hosts together), which ECO joins to their neighbours: per subnet of three
///    hosts or more, its hosts grouped into rate classes by what they receive (cut where the
///    next is more than 1 + tolerance slower); the classes of two hosts or more (at least
///    two of them) in a ring, every host sending to the host a largest class further on, so
///    that each class's hosts all send out of it and receive into it at once (behind FIFO
///    host NICs, ProbeOptions::fifo_nics, two rounds per class instead: its hosts sending
///    only, to the other classes' fastest receivers, then receiving only). One pass, a
///    second when the first shows something. A class whose flows out (or in) carried
///    together, in its best pass, less than what the NICs allow divided by 1 + tolerance/2
///    (flows into slow senders left out) sits behind an uplink of its own: it becomes a
///    subnet, its uplink measured as in step 6 with as many flows as it has hosts, else the
///    most that crossed it in the round; the other classes of two or more stay together;
///    hosts alone in their class are placed again as in step 7. Classes are cut by rate
///    alone, so each class found behind an uplink, of three to six hosts, sends out again,
///    with every host and without each in turn (two passes each): a host whose flow adds
///    what it sends alone while the others fill something without it is beside that uplink
///    (a 55 Mbit/s host of one subnet in a class with 50 Mbit/s hosts of another) and is
///    placed again as in step 7. A class that fell short by
///    less than the whole tolerance must also show its own measurement held back, by half
///    the tolerance, beyond what the NICs and the other uplinks found allow (on FIFO links a
///    host's ACKs queued behind its own data lower a round's sums too); else it goes as in 6b.
///    `doubts` names the subnets a host was placed with on no evidence (affinity, latency).
[[nodiscard]] ProbeResult probe_capacities(const Matrix& latency, const MeasureFlows& measure,
                                           const ProbeOptions& options = {});

/// Structure first, for many hosts (probe_capacities() from ProbeOptions::structure_hosts
/// on): O(n) flows in a few dozen measurements whatever n, where steps 1–9 measure every
/// pair. `latency` (n × n, or empty; NaN where a pair was not pinged, then asked of
/// ProbeOptions::ping where needed) only places hosts no reading places. A fast host is
/// one whose NICs carry more than 1 + tolerance times any uplink; the subnets come out
/// right when each has two fast hosts and the uplinks limit what crosses them.
/// a. Blocks: the hosts in their order (a site numbers its machines by room), in blocks of
///    8; every pair of a block both ways, all blocks at once (round r: the host at i sends
///    to the one at i + r), min(repeats, 2) passes, each flow's largest reading. A pair
///    inside a subnet shares nothing but its NICs, so its readings are what the NICs allow;
///    ECO's test groups the block's hosts, those near hosts not near each other set aside.
/// b. Groups: the subnets known and the new groups in a ring by lowest member, each
///    sending from its core (members near half the others) to the group 1, 2 and 3 places
///    on, every group at once. Most flows within tolerance of what their NICs allow: one
///    subnet (a block border cut it); else the sum bounds both uplinks. A member stays when
///    one of its readings inside is above 1 + tolerance times its uplink's bound (a flow
///    across could not carry that); a group left with fewer than two is dissolved.
/// c. Joins: each host left tests the subnets, nearest in the order first: a flow to a
///    member and one from another, all such hosts at once (a member takes one flow each way
///    per measurement), until a reading above 1 + tolerance times the subnet's uplink (no
///    uplink found: within tolerance of the member's NIC) places it. A failed try whose two
///    readings were alike, no faster than the host ever read, and below what the tried
///    uplink (shared by the hosts tried at once) and the partners carry was limited by the
///    host's own NIC or its own subnet's uplink: only subnets behind an uplink that could
///    have limited it are tried further, and d tries those (and the ones tried) first. a–c
///    again on the hosts left, in their order, then shuffled.
/// d. Hosts still left (slower than the uplinks both ways, or alone in their subnet): a
///    sharing test against the subnets c left possible (two at least), else the four
///    likeliest (by latency, else by their best reading), one measurement each: a flow to a
///    member and one from another while flows from the next subnet in a ring fill every
///    uplink both ways; the one subnet in which both keep their rate takes the host. None
///    or several: the subnet nearest by latency (without latency: their best reading); its
///    doubt says so. Latency to a subnet is the median over its members pinged; with fewer
///    than eight of them pinged, more are pinged (ProbeOptions::ping).
/// e. NICs: per subnet, a host whose best flow out (in) a faster partner has not yet tried
///    sends to (receives from) the fastest such partner, all subnets at once, up to eight
///    rounds; each NIC rate is the most a flow inside carried. Hosts that read alike with
///    half their subnet or more at its top rate tie (no partner can show more) and skip this.
/// f. Uplinks (after the groups, again at the end only when pieces were merged or an uplink
///    is unknown): subnets ranked by what crossed them, paired 1–2, 3–4, ... then 2–3, 4–5, ...
///    (each meets a faster one), both ways at once with as many flows as the smaller has
///    hosts, windows twice as long; the largest sum the NICs do not explain (by half the
///    tolerance) is the uplink; none: infinite, and a doubt. Ranked again (twice at most) if changed.
/// `notes` says, per subnet, how far above its uplink its weakest member read inside, and the
/// measurements per step;
/// `doubts` names hosts placed on no evidence and uplinks no test filled. `goodput` holds
/// each pair's largest reading where one was measured, elsewhere (like `bandwidth` everywhere)
/// what the map allows the pair alone; `unmeasured` stays empty.
[[nodiscard]] ProbeResult probe_structure(std::size_t hosts, const MeasureFlows& measure,
                                          const ProbeOptions& options = {}, const Matrix& latency = {});

struct JoinResult {
    std::size_t subnet = static_cast<std::size_t>(-1);  ///< index into the map's subnets; -1: none told
    double egress = 0, ingress = 0;  ///< what its flows inside that subnet carried
    std::string doubt;               ///< empty when a reading placed it
    std::size_t measurements = 0;
    double measured_seconds = 0;
    std::size_t flows = 0;
};

/// A host joining a mapped site (`subnets` and `capacities` of `hosts` hosts; the host in
/// none of them, or alone, or listed where it was): per subnet in order, one measurement
/// of a flow to its fastest receiver and one from its fastest sender; the first subnet in
/// which a reading exceeds 1 + tolerance times its uplink takes it, else the one that came
/// closest (with a doubt). O(subnets) measurements of two flows. Throws InputError for a
/// map that does not fit `hosts`.
[[nodiscard]] JoinResult probe_join(std::size_t hosts, NodeId host, const Subnets& subnets,
                                    const Capacities& capacities, const MeasureFlows& measure,
                                    const ProbeOptions& options = {});

struct UplinkResult {
    double uplink = 0;   ///< bytes/s; infinite when the NICs explain all that crossed it
    std::string doubt;   ///< why the reading may be low or absent; empty when a flow filled it
    std::size_t measurements = 0;
    double measured_seconds = 0;
    std::size_t flows = 0;
};

/// One subnet's uplink measured again on a mapped site (`subnets` and `capacities` of
/// `hosts` hosts, two subnets at least): as many flows out of it as it has hosts (three at
/// least) to the other subnets' fastest receivers in turn, and as many into it, at once,
/// as in step 6 (`hetcast probe --refresh-uplink`). A direction that carried clearly less
/// than the NICs and the other uplinks (as the map has them) allow filled this one; none:
/// infinite, with a doubt. With two subnets the reading is the slower uplink's.
/// Throws InputError for a map that does not fit `hosts`.
[[nodiscard]] UplinkResult probe_uplink(std::size_t hosts, std::size_t subnet, const Subnets& subnets,
                                        const Capacities& capacities, const MeasureFlows& measure,
                                        const ProbeOptions& options = {});

/// Each pair's latency replaced by the median of its kind: inside one subnet, or across
/// (hosts in no subnet count as across); NaN entries (pairs not pinged) are left out of the
/// medians. What a probed map keeps: pings on a LAN differ by
/// their noise more than by their path (hosts-96 on netlab: 39 µs to 5 ms inside a subnet,
/// 46 µs to 7 ms across), and an N × N matrix is ~200 kB at 96 hosts, 20 MB at 1000, sent to
/// every member. The map file then holds two numbers (model/loader.hpp).
[[nodiscard]] Matrix latency_by_kind(const Matrix& latency, const Subnets& subnets);

/// Rounds of disjoint pairs covering every unordered pair once: the circle method of a
/// round-robin tournament, N−1 rounds for even N (N rounds for odd N, one node idle).
[[nodiscard]] std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> round_robin(std::uint32_t n);

}  // namespace hetcast
