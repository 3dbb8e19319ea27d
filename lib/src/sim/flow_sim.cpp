// The flow simulator's event loop (simulate_flows(), docs/model.md "Shared capacities"), with
// the sharing recomputed for every flow at each event (the reference) or only for the
// flows connected to what changed.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <string>
#include <unordered_map>

#include "hetcast/error.hpp"
#include "hetcast/sim/flow.hpp"
#include "timeline_checks.hpp"

namespace hetcast {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

/// Rates kept up to date component by component. Max-min sharing (and sharing_rates()'s
/// second pass) on a set of flows is the union of its results on the connected components
/// of the flow-resource graph, a flow held to another's rate joined to that one: a change
/// reaches only the flows of its component.
class Sharing {
public:
    Sharing(const std::vector<double>& caps, const std::vector<char>& fifo, std::size_t transfers)
        : caps_(caps), fifo_(fifo), on_(caps.size()), res_seen_(caps.size(), 0), res_local_(caps.size(), 0),
          flow_seen_(transfers, 0), solved_(transfers, 0), dirty_(transfers, 0) {}

    void join(std::size_t k, const FlowPath& p) {
        for (std::size_t r : p.resources) on_[r].push_back(k);
        touch(k);
    }
    void leave(std::size_t k, const FlowPath& p) {
        for (std::size_t r : p.resources) {
            auto& v = on_[r];
            v.erase(std::find(v.begin(), v.end(), k));
            for (std::size_t g : v) touch(g);
        }
        dirty_[k] = 0;
    }
    /// Flow k's sharing may have changed: its component is recomputed at the next update.
    void touch(std::size_t k) {
        if (!dirty_[k]) {
            dirty_[k] = 1;
            seeds_.push_back(k);
        }
    }

    /// Recomputes the components of the touched flows. `slot(k)` is transfer k's index among
    /// the `count` active flows (SIZE_MAX once it ended), `transfer(i)` the reverse,
    /// `path(i)` its path, `follows[i]` the index it is held to, `set(i, rate)` stores.
    template <class Slot, class Transfer, class Path, class Set>
    void update(std::size_t count, Slot slot, Transfer transfer, Path path, const std::vector<std::size_t>& follows,
                Set set) {
        if (seeds_.empty()) return;
        // Who is held to whom, as one list per slot: from_[i] .. from_[i + 1] in held_by_.
        from_.assign(count + 1, 0);
        for (std::size_t i = 0; i < count; ++i) {
            if (follows[i] != none) ++from_[follows[i] + 1];
        }
        for (std::size_t i = 0; i < count; ++i) from_[i + 1] += from_[i];
        held_by_.resize(from_[count]);
        fill_.assign(from_.begin(), from_.end() - 1);
        for (std::size_t i = 0; i < count; ++i) {
            if (follows[i] != none) held_by_[fill_[follows[i]]++] = i;
        }
        position_.resize(count);
        ++round_;
        for (std::size_t k : seeds_) {
            dirty_[k] = 0;
            const std::size_t start = slot(k);
            if (start == none || solved_[k] == round_) continue;
            component(start, slot, transfer, path, follows);
            for (std::size_t i : members_) solved_[transfer(i)] = round_;
            solve(path, follows, set);
        }
        seeds_.clear();
    }

private:
    template <class Slot, class Transfer, class Path>
    void component(std::size_t start, Slot slot, Transfer transfer, Path path, const std::vector<std::size_t>& follows) {
        ++epoch_;
        members_.clear();
        resources_.clear();
        const auto visit = [&](std::size_t i) {
            const std::size_t k = transfer(i);
            if (flow_seen_[k] == epoch_) return;
            flow_seen_[k] = epoch_;
            members_.push_back(i);
        };
        visit(start);
        for (std::size_t q = 0; q < members_.size(); ++q) {
            const std::size_t i = members_[q];
            for (std::size_t r : path(i).resources) {
                if (res_seen_[r] == epoch_) continue;
                res_seen_[r] = epoch_;
                res_local_[r] = resources_.size();
                resources_.push_back(r);
                for (std::size_t g : on_[r]) visit(slot(g));
            }
            if (follows[i] != none) visit(follows[i]);
            for (std::size_t j = from_[i]; j < from_[i + 1]; ++j) visit(held_by_[j]);
        }
    }

    template <class Path, class Set>
    void solve(Path path, const std::vector<std::size_t>& follows, Set set) {
        std::vector<double> caps(resources_.size());
        std::vector<char> fifo(fifo_.empty() ? 0 : resources_.size(), 0);
        for (std::size_t j = 0; j < resources_.size(); ++j) {
            caps[j] = caps_[resources_[j]];
            if (!fifo_.empty()) fifo[j] = fifo_[resources_[j]];
        }
        // In slot order, as the full computation sees them: ties resolve alike.
        std::sort(members_.begin(), members_.end());
        for (std::size_t m = 0; m < members_.size(); ++m) position_[members_[m]] = m;
        std::vector<FlowPath> paths(members_.size());
        std::vector<std::size_t> held(members_.size(), none);
        for (std::size_t m = 0; m < members_.size(); ++m) {
            const FlowPath& p = path(members_[m]);
            paths[m].cap = p.cap;
            paths[m].resources.reserve(p.resources.size());
            for (std::size_t r : p.resources) paths[m].resources.push_back(res_local_[r]);
            if (follows[members_[m]] != none) held[m] = position_[follows[members_[m]]];
        }
        const std::vector<double> rates = sharing_rates(caps, fifo, paths, held);
        for (std::size_t m = 0; m < members_.size(); ++m) set(members_[m], rates[m]);
    }

    const std::vector<double>& caps_;
    const std::vector<char>& fifo_;
    std::vector<std::vector<std::size_t>> on_;  ///< per resource: the transfers whose flows cross it
    std::vector<std::size_t> res_seen_, res_local_;  ///< per resource: component mark, local index
    std::vector<std::size_t> flow_seen_, solved_;    ///< per transfer: component mark, update mark
    std::vector<char> dirty_;
    std::vector<std::size_t> seeds_;
    std::vector<std::size_t> from_, held_by_, fill_;
    std::vector<std::size_t> members_, resources_;     ///< of the component at hand
    std::vector<std::size_t> position_;                ///< per slot: index among members_
    std::size_t epoch_ = 0, round_ = 0;
};

Timeline run(const Network& net, const Schedule& s, const std::vector<BackgroundFlow>& beside, bool incremental) {
    detail::validate_schedule(net, s);
    const bool cut_through = s.relay == Relay::cut_through;
    if (cut_through && net.is_cost_matrix()) {
        throw InputError("a cut-through schedule needs a network with bandwidths, not a cost matrix");
    }
    if (cut_through && s.piece == 0) throw InputError("a cut-through schedule needs pieces of at least one byte");
    const std::size_t n = net.size();
    const std::vector<double> caps = resource_capacities(net);
    const std::vector<char> fifo = fifo_resources(net);
    const auto& netcaps = net.capacities();
    const std::vector<std::size_t> subnet_of =
        netcaps && !netcaps->uplink.empty() ? net.subnet_of() : std::vector<std::size_t>{};
    // Transfers are numbered in the order their sends are issued; the flows beside the
    // schedule come after all of them.
    const std::size_t first_beside = s.transfer_count();
    Sharing sharing(caps, fifo, first_beside + beside.size());
    std::vector<std::size_t> pc(n, 0);
    std::vector<double> clock(n, 0.0);
    std::vector<char> blocked(n, 0);
    std::vector<std::size_t> issued(s.messages.size() * n, none);  // (message, receiver) → transfer
    Timeline tl;
    tl.transfers.reserve(s.transfer_count());

    // Bytes a receiver needs before its list goes past the receive: the first piece when
    // cutting through, else the whole message (then the head is the arrival itself).
    const auto head_of = [&](double size) {
        return cut_through ? std::min(static_cast<double>(s.piece), size) : size;
    };
    struct State {
        std::size_t supply = none;  ///< cut-through: the transfer that brings the message to the sender
        std::size_t slot = none;    ///< index in `active` while its flow runs
        bool head_in = false;       ///< the head has arrived, at head_at
        double head_at = 0;
        double reached = -1;        ///< when the receiver's list reached the receive; < 0: not yet
        bool arrived = false;
        bool on_lane = false;       ///< its flow has the pair's lane (or is beside the schedule)
    };
    std::vector<State> state(first_beside + beside.size());

    struct Flow {
        std::size_t transfer;
        FlowPath path;
        double size;
        double head;
        double left;  ///< bytes
        double rate = 0;
        std::size_t held = none;  ///< the transfer it was last held to (incremental)
    };
    std::vector<Flow> active;
    struct Start {
        double at;
        std::size_t transfer;
        bool operator>(const Start& o) const { return at != o.at ? at > o.at : transfer > o.transfer; }
    };
    std::priority_queue<Start, std::vector<Start>, std::greater<>> starts;
    for (std::size_t b = 0; b < beside.size(); ++b) {
        if (beside[b].from >= n || beside[b].to >= n || beside[b].from == beside[b].to) {
            throw InputError("a flow beside the schedule names a bad sender or receiver");
        }
        if (beside[b].bytes > 0) starts.push({0.0, first_beside + b});
    }
    std::deque<NodeId> ready;
    for (NodeId i = 0; i < n; ++i) ready.push_back(i);
    // A job sends to a peer on one lane (docs/protocol.md, "Lanes"): its messages go in the
    // order they were sent, except that while every message on the lane waits for bytes its
    // relay has not yet received, the next one goes too. Per pair: its flows under way, and
    // the transfers waiting behind them.
    struct Lane {
        std::size_t running = 0;
        std::deque<std::size_t> waiting;
    };
    std::unordered_map<std::size_t, Lane> lanes;
    const auto lane_of = [n](const Transfer& t) { return t.from * n + t.to; };
    // The lane's next waiting transfer starts at `at`.
    const auto admit_next = [&](Lane& lane, double at) {
        const std::size_t next = lane.waiting.front();
        lane.waiting.pop_front();
        ++lane.running;
        state[next].on_lane = true;
        starts.push({at, next});
    };

    const auto complete = [&](std::size_t k) {
        Transfer& tr = tl.transfers[k];
        tr.complete = std::max(tr.arrival, state[k].reached) + net.recv_busy(tr.to, s.messages[tr.message].size);
    };
    const auto run = [&](NodeId node) {
        blocked[node] = 0;
        for (; pc[node] < s.tasks[node].size(); ++pc[node]) {
            const Task& t = s.tasks[node][pc[node]];
            const double size = s.messages[t.message].size;
            if (t.op == Op::send) {
                const double free = clock[node] + net.send_busy(node, t.peer, size);
                issued[t.message * n + t.peer] = tl.transfers.size();
                tl.transfers.push_back({t.message, node, t.peer, clock[node], free, 0.0, 0.0});
                if (cut_through && s.messages[t.message].source != node) {
                    state[tl.transfers.size() - 1].supply = issued[t.message * n + node];
                }
                starts.push({free, tl.transfers.size() - 1});
                clock[node] = free;
            } else {
                const std::size_t k = issued[t.message * n + node];
                if (k == none || !state[k].head_in) {
                    blocked[node] = 1;
                    return;
                }
                // The receiver takes the head off the network before it goes on; with the
                // whole message as head this is the store-and-forward receive.
                state[k].reached = clock[node];
                clock[node] = std::max(state[k].head_at, clock[node]) + net.recv_busy(node, head_of(size));
                if (state[k].arrived) complete(k);
            }
        }
    };
    const auto head_arrived = [&](std::size_t k, double at) {
        state[k].head_in = true;
        state[k].head_at = at;
        const Transfer& tr = tl.transfers[k];
        const NodeId to = tr.to;
        if (blocked[to]) {
            const Task& t = s.tasks[to][pc[to]];
            if (t.message == tr.message && t.peer == tr.from) ready.push_back(to);
        }
    };
    const auto finish = [&](std::size_t k, double at) {
        Transfer& tr = tl.transfers[k];
        // A relayed flow carries its last byte no sooner than that byte reached the relay.
        const std::size_t sup = state[k].supply;
        const double last = sup == none ? at : std::max(at, tl.transfers[sup].arrival);
        tr.arrival = last + net.wire(tr.from, tr.to, 0);
        state[k].arrived = true;
        if (!state[k].head_in) head_arrived(k, tr.arrival);
        if (state[k].reached >= 0) complete(k);
        if (const auto lane = lanes.find(lane_of(tr)); lane != lanes.end() && --lane->second.running == 0) {
            if (lane->second.waiting.empty()) {
                lanes.erase(lane);
            } else {
                // The lane is free once the relay has written the last byte, which it had to receive first.
                admit_next(lane->second, last);
            }
        }
    };
    // Cut through, a relay passes on a piece once it holds all of it: a relayed flow stays a
    // piece behind its supply until the supply is done, and then sends that piece at its own
    // rate. So every hop adds a piece at its rate to the end (netlab random --seed 11: a chain
    // of 1 MiB pieces through six 50 Mbit/s hosts ended 1.0 s after its head, 0.17 s a hop,
    // where the model without the lag had every hop end with its supply).
    const auto lag = [&](const Flow& f) { return cut_through ? f.head : 0.0; };
    const auto supply_slot = [&](const Flow& f) {
        const std::size_t sup = state[f.transfer].supply;
        return sup == none ? none : state[sup].slot;
    };
    // Bytes a relayed flow has left beyond the piece it must stay behind its supply `sup`.
    const auto ahead = [&](const Flow& f, std::size_t sup) { return f.left - (active[sup].left + lag(f)); };
    const auto remove = [&](std::size_t i) {
        if (incremental) sharing.leave(active[i].transfer, active[i].path);
        state[active[i].transfer].slot = none;
        if (i + 1 != active.size()) {
            active[i] = std::move(active.back());
            state[active[i].transfer].slot = i;
        }
        active.pop_back();
    };

    double now = 0;
    std::size_t still = 0;  // rounds in a row that moved no time on
    while (true) {
        while (!ready.empty()) {
            const NodeId node = ready.front();
            ready.pop_front();
            run(node);
        }
        if (active.empty() && starts.empty()) break;
        // Events: a flow starts, ends, brings in its head, or catches up with its supply.
        double next = starts.empty() ? inf : starts.top().at;
        for (const Flow& f : active) {
            next = std::min(next, now + f.left / f.rate);
            if (!state[f.transfer].head_in) next = std::min(next, now + (f.left - (f.size - f.head)) / f.rate);
            const std::size_t sup = supply_slot(f);
            if (sup != none && f.rate > active[sup].rate && ahead(f, sup) > f.rate * 1e-9) {
                next = std::min(next, now + ahead(f, sup) / (f.rate - active[sup].rate));
            }
        }
        // A model that cannot move on must say so, never spin: every flow stuck at rate 0
        // (next is infinite), or events that keep falling on the same instant.
        still = next > now ? 0 : still + 1;
        if (!std::isfinite(next) || still > 100 * (active.size() + 10)) {
            std::string flows;
            for (const Flow& f : active) {
                if (flows.size() > 300) break;
                flows += " [" + std::to_string(f.transfer) + ": " + std::to_string(f.left) + " B left at " + std::to_string(f.rate) + " B/s]";
            }
            throw Error("the flow model stalled at t = " + std::to_string(now) + " s:" + flows);
        }
        if (next > now) {
            for (Flow& f : active) f.left -= f.rate * (next - now);
        }
        now = next;
        // A relayed flow never runs ahead of what the relay has; within a nanosecond of
        // its supply it has caught up.
        for (Flow& f : active) {
            const std::size_t sup = supply_slot(f);
            if (sup != none && ahead(f, sup) <= f.rate * 1e-9) f.left -= ahead(f, sup);
        }
        // A flow is done when what is left would take less than a nanosecond, and not
        // before its supply is done.
        for (bool again = true; again;) {
            again = false;
            for (std::size_t i = 0; i < active.size();) {
                if (active[i].left <= active[i].rate * 1e-9 && supply_slot(active[i]) == none) {
                    if (active[i].transfer < first_beside) finish(active[i].transfer, now);
                    remove(i);
                    again = true;
                } else {
                    ++i;
                }
            }
        }
        for (const Flow& f : active) {
            if (!state[f.transfer].head_in && f.left - (f.size - f.head) <= f.rate * 1e-9) {
                const Transfer& tr = tl.transfers[f.transfer];
                head_arrived(f.transfer, now + net.wire(tr.from, tr.to, 0));
            }
        }
        while (!starts.empty() && starts.top().at <= now) {
            const std::size_t k = starts.top().transfer;
            starts.pop();
            if (k >= first_beside) {
                const BackgroundFlow& b = beside[k - first_beside];
                FlowPath path = flow_path(net, subnet_of, b.from, b.to);
                if (b.cap > 0) path.cap = std::min(path.cap, b.cap);
                state[k].head_in = true;
                state[k].slot = active.size();
                active.push_back({k, std::move(path), b.bytes, b.bytes, b.bytes});
                if (incremental) sharing.join(k, active.back().path);
                continue;
            }
            const Transfer& tr = tl.transfers[k];
            if (!state[k].on_lane) {
                Lane& lane = lanes[lane_of(tr)];
                if (lane.running > 0 || !lane.waiting.empty()) {
                    lane.waiting.push_back(k);
                    continue;
                }
                ++lane.running;
                state[k].on_lane = true;
            }
            const double size = s.messages[tr.message].size;
            if (size <= 0) {
                finish(k, now);
                continue;
            }
            state[k].slot = active.size();
            active.push_back({k, flow_path(net, subnet_of, tr.from, tr.to), size, head_of(size), size});
            if (incremental) sharing.join(k, active.back().path);
        }
        if (active.empty()) continue;
        // Max-min rates in which a flow that has caught up with its supply rises no faster.
        std::vector<std::size_t> follows(active.size(), none);
        for (std::size_t i = 0; i < active.size(); ++i) {
            const std::size_t sup = supply_slot(active[i]);
            // Within the nanosecond the catching up is rounded to: clamped one after the other,
            // a supply that is itself relayed moves after its flow was clamped to it.
            if (sup != none && ahead(active[i], sup) <= std::max(active[i].rate, active[sup].rate) * 1e-9) {
                follows[i] = sup;
            }
        }
        // A lane whose every flow has caught up with its supply takes the next message too.
        bool more = false;
        if (cut_through) {
            std::unordered_map<std::size_t, std::size_t> held;  // per lane with some waiting: its flows held
            for (std::size_t i = 0; i < active.size(); ++i) {
                if (active[i].transfer >= first_beside || follows[i] == none) continue;
                const std::size_t key = lane_of(tl.transfers[active[i].transfer]);
                const auto lane = lanes.find(key);
                if (lane != lanes.end() && !lane->second.waiting.empty()) ++held[key];
            }
            for (const auto& [key, count] : held) {
                Lane& lane = lanes[key];
                if (count < lane.running) continue;  // one still runs, or is about to start
                admit_next(lane, now);
                more = true;
            }
        }
        if (more) continue;  // they start at this moment; the rates follow
        if (incremental) {
            for (std::size_t i = 0; i < active.size(); ++i) {
                const std::size_t held = follows[i] == none ? none : active[follows[i]].transfer;
                if (held != active[i].held) {
                    active[i].held = held;
                    sharing.touch(active[i].transfer);
                }
            }
            sharing.update(
                active.size(), [&](std::size_t k) { return state[k].slot; }, [&](std::size_t i) { return active[i].transfer; },
                [&](std::size_t i) -> const FlowPath& { return active[i].path; }, follows,
                [&](std::size_t i, double rate) { active[i].rate = rate; });
            continue;
        }
        std::vector<FlowPath> paths;
        paths.reserve(active.size());
        for (const Flow& f : active) paths.push_back(f.path);
        const std::vector<double> rates = sharing_rates(caps, fifo, paths, follows);
        for (std::size_t i = 0; i < active.size(); ++i) active[i].rate = rates[i];
    }
    detail::close_timeline(net, s, pc, tl);
    return tl;
}

}  // namespace

Timeline simulate_flows(const Network& net, const Schedule& s, const std::vector<BackgroundFlow>& beside) {
    return run(net, s, beside, true);
}

Timeline simulate_flows_reference(const Network& net, const Schedule& s, const std::vector<BackgroundFlow>& beside) {
    return run(net, s, beside, false);
}

}  // namespace hetcast
