#include "peer_pace.hpp"

#include <algorithm>
#include <cmath>
#include <system_error>

namespace hetcast::detail {

CrossingPacer::CrossingPacer(const Network& net, const Schedule& s, const Timeline& predicted,
                             const std::vector<Pace>& planned)
    : net_(net), cut_through_(s.relay == Relay::cut_through) {
    // Per send task: the last receive before it in its sender's list.
    std::map<std::tuple<MessageId, NodeId, NodeId>, std::optional<std::pair<MessageId, NodeId>>> before;
    for (NodeId v = 0; v < s.tasks.size(); ++v) {
        std::optional<std::pair<MessageId, NodeId>> last;
        for (const Task& t : s.tasks[v]) {
            if (t.op == Op::recv) {
                last = std::make_pair(t.message, v);
            } else {
                before[{t.message, v, t.peer}] = last;
            }
        }
    }
    const std::vector<char> paceable = may_be_paced(net, predicted.transfers);
    for (std::size_t i = 0; i < paceable.size(); ++i) {
        if (!paceable[i]) continue;
        const Transfer& t = predicted.transfers[i];
        crossing_.push_back(Transfer{t.message, t.from, t.to, t.start, 0, 0, 0});
        told_[{t.message, t.from, t.to}] = 0;
    }
    std::stable_sort(crossing_.begin(), crossing_.end(), [](const Transfer& a, const Transfer& b) { return a.start < b.start; });
    for (const Transfer& t : crossing_) after_.push_back(before[{t.message, t.from, t.to}]);
    for (const Pace& p : planned) told_[{p.message, p.from, p.to}] = p.rate;
}

std::map<std::string, std::vector<SendPace>> CrossingPacer::update(const std::vector<BackgroundFlow>& beside, double elapsed,
                                                                   const std::set<std::pair<MessageId, std::string>>& done) {
    // A send runs once its sender holds the message of the receive before it in its list: a
    // run behind its prediction must not count the transfers predicted by now (on MPI's pairwise
    // exchange that held every port to a fifth and put the run further behind, 3.2x the
    // bound). Cut through, a receive is passed at its first piece, which no event says: the
    // predicted start stands in. Of the transfers between two nodes only the first not yet
    // delivered runs: they go one after another on their lane.
    std::vector<Transfer> running;
    std::set<std::pair<NodeId, NodeId>> busy;
    for (std::size_t i = 0; i < crossing_.size(); ++i) {
        const Transfer& t = crossing_[i];
        const auto& a = after_[i];
        const bool reached = cut_through_ ? t.start <= elapsed : !a || done.count({a->first, net_.name(a->second)}) > 0;
        if (reached && !done.count({t.message, net_.name(t.to)}) && busy.insert({t.from, t.to}).second) {
            running.push_back(t);
        }
    }
    std::map<std::string, std::vector<SendPace>> out;
    for (const Pace& p : current_paces(net_, running, beside)) {
        double& told = told_[{p.message, p.from, p.to}];
        // Small changes are not worth a frame: a share moves by a whole flow's worth.
        if (std::abs(p.rate - told) <= 0.02 * std::max(p.rate, told)) continue;
        told = p.rate;
        out[net_.name(p.from)].push_back({p.message, net_.name(p.to), p.rate});
    }
    return out;
}

BesideWatch::BesideWatch(Ask ask, std::chrono::milliseconds every)
    : ask_(std::move(ask)), every_(every), first_(launch()), next_(std::chrono::steady_clock::now()) {}

std::future<Beside> BesideWatch::launch() {
    try {
        return std::async(std::launch::async, ask_);
    } catch (const std::system_error&) {
        return {};  // no thread to spare: asked again next time round
    }
}

std::optional<Beside> BesideWatch::poll(bool keep_asking) {
    const auto ready = [](const std::future<Beside>& f) {
        return f.valid() && f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    };
    std::optional<Beside> heard;
    try {
        if (ready(first_)) {
            start_ = first_.get();
            heard = start_;
        } else if (ready(asking_)) {
            heard = asking_.get();
        }
    } catch (const std::exception&) {
        // Members that did not answer: what was heard last stays until the next ask.
    }
    if (keep_asking && !first_.valid() && !asking_.valid() && std::chrono::steady_clock::now() >= next_) {
        next_ = std::chrono::steady_clock::now() + every_;
        asking_ = launch();
    }
    return heard;
}

std::optional<Beside> BesideWatch::at_start() {
    if (first_.valid()) {
        try {
            start_ = first_.get();
        } catch (const std::exception&) {
        }
    }
    return start_;
}

void apply_paces(Job& job, const std::vector<SendPace>& paces) {
    std::lock_guard lock(job.mu);
    for (const SendPace& p : paces) {
        job.paces[{p.message, p.to}] = p.rate;
        if (auto it = job.lanes_out.find(p.to); it != job.lanes_out.end()) (void)it->second->set_max_pacing(p.rate);
    }
}

}  // namespace hetcast::detail
