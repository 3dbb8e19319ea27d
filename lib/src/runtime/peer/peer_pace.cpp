#include "peer_pace.hpp"

#include <cmath>

namespace hetcast::detail {

CrossingPacer::CrossingPacer(const Network& net, const Timeline& predicted, const std::vector<Pace>& planned)
    : net_(net) {
    // Every crossing, as current_paces() lists them with nobody beside.
    for (const Pace& p : current_paces(net, predicted.transfers, {})) {
        crossing_.push_back(Transfer{p.message, p.from, p.to, 0, 0, 0, 0});
        told_[{p.message, p.from, p.to}] = 0;
    }
    for (const Pace& p : planned) told_[{p.message, p.from, p.to}] = p.rate;
}

std::map<std::string, std::vector<SendPace>> CrossingPacer::update(const std::vector<BackgroundFlow>& beside,
                                                                   const std::set<std::pair<MessageId, std::string>>& done) {
    std::vector<Transfer> running;
    for (const Transfer& t : crossing_) {
        if (!done.count({t.message, net_.name(t.to)})) running.push_back(t);
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

void apply_paces(Job& job, const std::vector<SendPace>& paces) {
    std::lock_guard lock(job.mu);
    for (const SendPace& p : paces) {
        job.paces[{p.message, p.to}] = p.rate;
        if (auto it = job.lanes_out.find(p.to); it != job.lanes_out.end()) (void)it->second->set_max_pacing(p.rate);
    }
}

}  // namespace hetcast::detail
