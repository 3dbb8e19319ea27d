// The public Peer API: a thin assembly of the runtime's parts. Connections and frame
// dispatch are in peer_connections.cpp, asking other members in peer_calls.cpp;
// a job's participant side in peer_tasks.cpp and peer_arrive.cpp, its coordinator
// side in peer_coordinate.cpp (docs/architecture.md).
#include "hetcast/runtime/peer.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/pieces.hpp"
#include "peer_impl.hpp"

namespace hetcast {
using namespace detail;

Peer::Peer(PeerConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {
    impl_->owner = this;
    auto& cfg = impl_->cfg;
    if (cfg.identity.cert_pem.empty()) throw InputError("a peer needs an identity (hetcast keys issue NAME)");
    const net::PeerIdentity me = net::describe(cfg.identity);
    if (me.role != net::Role::member) throw InputError("'" + me.name + "' is an operator's identity, not a member's");
    if (cfg.name.empty()) cfg.name = me.name;
    if (cfg.name != me.name) {
        throw InputError("the identity names '" + me.name + "' but this peer is '" + cfg.name + "'");
    }
    if (impl_->cfg.spool.empty()) impl_->cfg.spool = impl_->cfg.dest_root / ".hetcast-spool";
}

Peer::~Peer() { stop(); }

const PeerStats& Peer::stats() const { return impl_->stats; }

void Peer::start() {
    Impl& d = *impl_;
    net::TransportConfig tc;
    tc.identity = d.cfg.identity;
    tc.host = d.cfg.host;
    tc.port = d.cfg.port;
    if (d.cfg.chunk == 0 || d.cfg.chunk > max_chunk) throw InputError("chunk must be 1 byte to 8 MiB");
    tc.max_frame = max_frame_payload;
    tc.timeout = d.cfg.connect_timeout;
    tc.stall = d.cfg.stall_timeout;
    tc.idle = d.cfg.idle_timeout;
    tc.connections_per_peer = d.cfg.connections_per_peer;
    net::TransportCallbacks cb;
    cb.on_frame = [&d](const ConnectionPtr& c, Frame&& f) { d.on_frame(c, std::move(f)); };
    cb.on_close = [&d](const ConnectionPtr& c, const std::string& why) {
        ++d.stats.connections_closed;
        d.on_close(c, why);
    };
    cb.on_open = [&d](const ConnectionPtr& c) {
        ++d.stats.connections_opened;
        d.on_open(c);
    };
    cb.admit = [&d](const net::PeerIdentity& who) { return d.admit(who); };
    cb.admit_inbound = [&d](const net::PeerIdentity& who) { return d.admit_inbound(who); };
    cb.busy = [&d](const ConnectionPtr& c) { return d.busy(c); };
    cb.log = [&d](LogLevel level, const std::string& line) { d.log(level, line); };
    d.transport = net::make_tcp_transport(tc, cb);
    d.transport->start();
    d.janitor = std::thread([&d] {
        std::unique_lock lock(d.mu);
        while (!d.stopping) {
            d.janitor_cv.wait_for(lock, std::chrono::seconds(1));
            if (d.stopping) break;
            lock.unlock();
            d.reap();
            lock.lock();
        }
    });
}

void Peer::stop() {
    Impl& d = *impl_;
    if (!d.transport || d.stopping.exchange(true)) return;
    {
        std::lock_guard lock(d.mu);
        d.janitor_cv.notify_all();
        d.waiting_cv.notify_all();
    }
    if (d.janitor.joinable()) d.janitor.join();
    const std::vector<std::shared_ptr<Job>> js = d.jobs.close();
    for (auto& [id, k] : d.coords.all()) k->cv.notify_all();
    {
        std::lock_guard lock(d.mu);
        d.inbox_cv.notify_all();
    }
    for (auto& j : js) d.abort_job(*j, "the peer is stopping");
    (void)d.parked.clear();  // their temporaries go
    for (auto& j : js) {
        if (j->runner.joinable()) j->runner.join();
    }
    d.transport->stop();
    d.live.stop();
    d.quick.stop();
    d.slow.stop();
    d.pings.clear();
    d.calls.clear();
}

std::uint16_t Peer::port() const { return impl_->transport ? impl_->transport->port() : 0; }
const std::string& Peer::name() const { return impl_->cfg.name; }

void Peer::set_members(std::vector<Member> members) {
    for (auto& c : impl_->directory.set(std::move(members))) c->close();
}

std::vector<Member> Peer::members() const { return impl_->directory.list(); }

bool Peer::cancel(std::uint64_t job, const std::string& why) {
    Impl& d = *impl_;
    const std::vector<std::shared_ptr<Coord>> ks = d.coords.cancel(job, why);
    if (ks.empty()) {
        // A push waiting for busy members (peer_queue.cpp) has no try running.
        std::lock_guard lock(d.mu);
        const auto w = std::find_if(d.waiting.begin(), d.waiting.end(), [&](const auto& x) { return x.job == job; });
        if (w == d.waiting.end()) return false;
        if (w->cancelled.empty()) w->cancelled = why;
        d.waiting_cv.notify_all();
        return true;
    }
    for (auto& k : ks) {
        std::lock_guard lock(k->mu);
        if (k->cancelled.empty()) k->cancelled = why;
        k->cv.notify_all();
    }
    return true;
}

std::vector<JobInfo> Peer::jobs() const {
    const Impl& d = *impl_;
    const auto ks = d.coords.all();
    const auto js = d.jobs.all();
    const double now = now_s();
    std::vector<JobInfo> out;
    {
        std::lock_guard lock(d.mu);
        for (const auto& w : d.waiting) {
            JobInfo i;
            i.job = w.job;
            i.role = "coordinator";
            i.coordinator = d.cfg.name;
            i.algorithm = w.algorithm;
            i.seconds = now - w.since;
            i.owed = w.owed;
            i.state = "queued";
            out.push_back(std::move(i));
        }
    }
    for (const auto& [id, k] : ks) {
        std::lock_guard lock(k->mu);
        JobInfo i;
        i.job = k->push;
        i.role = "coordinator";
        i.coordinator = d.cfg.name;
        i.algorithm = k->algorithm;
        i.seconds = k->started > 0 ? now - k->started : 0;
        i.bytes = std::min(k->bytes_in, k->owed);
        i.owed = k->owed;
        i.state = k->started > 0 ? "running" : "planned";
        out.push_back(std::move(i));
    }
    for (const auto& j : js) {
        if (j->finished || !j->coordinator) continue;  // its coordinator (this peer) lists it
        std::lock_guard lock(j->mu);
        JobInfo i;
        i.job = j->plan.job;
        i.role = "participant";
        i.coordinator = j->plan.coordinator;
        i.algorithm = j->plan.algorithm;
        i.seconds = j->started > 0 ? now - j->started : now - j->planned;
        for (const auto& [m, r] : j->recv) i.bytes += r.got;
        i.state = j->aborted ? "ending" : (j->runner.joinable() ? "running" : "planned");
        out.push_back(std::move(i));
    }
    return out;
}

Peer::Beside Peer::beside(const Network& net, const std::vector<std::string>& participants, const Schedule* plan,
                          std::uint64_t rate) {
    return impl_->beside(net, participants, plan, rate);
}

JobReport Peer::run(JobSpec spec) {
    const Schedule& s = spec.schedule;
    if (s.relay == Relay::cut_through && spec.network) {
        // Messages sourced elsewhere: their piece digests come from their source.
        for (MessageId m = 0; m < spec.inputs.size() && m < s.messages.size(); ++m) {
            JobInput& in = spec.inputs[m];
            if (in.body || in.origin.empty() || s.messages[m].source >= spec.network->size()) continue;
            const Described d = describe(spec.network->name(s.messages[m].source), in.origin, s.piece, spec.order);
            if (d.size != in.size || !net::same_digest(d.sha, in.sha)) {
                throw InputError("'" + in.origin + "' changed since it was described");
            }
            in.pieces = d.pieces;
        }
    }
    return impl_->run(std::move(spec));
}

std::optional<Delivery> Peer::receive(std::chrono::milliseconds timeout) {
    std::unique_lock lock(impl_->mu);
    if (!impl_->inbox_cv.wait_for(lock, timeout, [&] { return !impl_->inbox.empty() || impl_->stopping; })) {
        return std::nullopt;
    }
    if (impl_->inbox.empty()) return std::nullopt;
    Delivery d = std::move(impl_->inbox.front());
    impl_->inbox.pop_front();
    return d;
}

void Peer::on_delivery(std::function<void(Delivery)> callback) {
    std::lock_guard lock(impl_->mu);
    impl_->delivery_cb = std::move(callback);
}

void Peer::on_landed(std::function<void(Landed)> callback) {
    std::lock_guard lock(impl_->mu);
    impl_->landed_cb = std::move(callback);
}

void Peer::on_request(std::function<void(const net::PeerIdentity&, const nlohmann::json&, Responder)> handler) {
    std::lock_guard lock(impl_->mu);
    impl_->request_handler = std::move(handler);
}

void Peer::offer(const std::string& key, std::shared_ptr<const net::MessageBody> body) {
    std::lock_guard lock(impl_->mu);
    impl_->offers[key] = std::move(body);
}

void Peer::withdraw(const std::string& key) {
    std::lock_guard lock(impl_->mu);
    impl_->offers.erase(key);
}

std::string Peer::Impl::admit(const net::PeerIdentity& who) const {
    if (!revocations.revoking(who)) return {};
    return "'" + who.name + "' was revoked (" + (who.role == net::Role::operator_ ? "by another operator" : "it left the cluster") +
           "); its identity is no longer accepted";
}

void Peer::revoke(const std::vector<net::Revocation>& revoked) {
    Impl& d = *impl_;
    const std::vector<net::Revocation> added = d.revocations.add(revoked);
    if (added.empty() || !d.transport) return;
    d.transport->close_if(
        [added](const net::PeerIdentity& who) {
            return std::any_of(added.begin(), added.end(), [&](const net::Revocation& r) { return net::revokes(r, who); });
        },
        "revoked");
}

const net::Identity& Peer::identity() const { return impl_->cfg.identity; }

std::vector<net::Revocation> Peer::revoked() const { return impl_->revocations.all(); }

}  // namespace hetcast
