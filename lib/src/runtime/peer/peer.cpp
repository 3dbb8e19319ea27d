// The public Peer API over the assembly (peer_impl.hpp): start and stop, and each call
// handed to the part that holds what it needs. Asking other members is peer_calls.cpp
// (docs/architecture.md).
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
    tc.congestion = d.cfg.tcp_congestion;
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
    cb.admit = [&d](const net::PeerIdentity& who) { return d.admission.admit(who); };
    cb.admit_inbound = [&d](const net::PeerIdentity& who) { return d.admission.admit_inbound(who); };
    cb.busy = [&d](const ConnectionPtr& c) { return d.busy(c); };
    cb.log = [&d](LogLevel level, const std::string& line) { d.log(level, line); };
    d.transport = net::make_tcp_transport(tc, cb);
    d.transport->start();
    d.janitor = std::thread([&d] {
        std::unique_lock lock(d.janitor_mu);
        while (!d.stopping) {
            d.janitor_cv.wait_for(lock, std::chrono::seconds(1));
            if (d.stopping) break;
            lock.unlock();
            d.participant.reap();
            d.relays.watch();
            lock.lock();
        }
    });
}

void Peer::stop() {
    Impl& d = *impl_;
    if (!d.transport || d.stopping.exchange(true)) return;
    {
        std::lock_guard lock(d.janitor_mu);
        d.janitor_cv.notify_all();
    }
    d.recovery.wake_all();
    if (d.janitor.joinable()) d.janitor.join();
    const std::vector<std::shared_ptr<Job>> js = d.participant.jobs().close();
    d.tries.wake_all();
    d.inbox.wake();
    for (auto& j : js) d.participant.abort(*j, "the peer is stopping");
    (void)d.parked.clear();  // their temporaries go
    for (auto& j : js) {
        if (j->runner.joinable()) j->runner.join();
    }
    d.transport->stop();
    d.live.stop();
    d.quick.stop();
    d.slow.stop();
    d.calls.clear();
}

std::uint16_t Peer::port() const { return impl_->transport ? impl_->transport->port() : 0; }
const std::string& Peer::name() const { return impl_->cfg.name; }

void Peer::set_members(std::vector<Member> members) {
    for (auto& c : impl_->connections.directory().set(std::move(members))) c->close();
}

std::vector<Member> Peer::members() const { return impl_->connections.directory().list(); }

bool Peer::cancel(std::uint64_t job, const std::string& why) {
    // A push waiting for busy members (peer_queue.cpp) has no try running.
    return impl_->tries.cancel(job, why) || impl_->recovery.cancel(job, why);
}

std::vector<JobInfo> Peer::jobs() const {
    const Impl& d = *impl_;
    const double now = now_s();
    std::vector<JobInfo> out;
    d.recovery.info(out, now);
    d.tries.info(out, now);
    d.participant.info(out, now);
    return out;
}

Peer::Beside Peer::beside(const Network& net, const std::vector<std::string>& participants, const Schedule* plan,
                          std::uint64_t rate) {
    return impl_->requests.beside(net, participants, plan, rate);
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
    return impl_->recovery.run(std::move(spec));
}

std::optional<Delivery> Peer::receive(std::chrono::milliseconds timeout) {
    return impl_->inbox.receive(timeout, impl_->stopping);
}

void Peer::on_delivery(std::function<void(Delivery)> callback) {
    impl_->inbox.on_delivery(std::move(callback));
}

void Peer::on_landed(std::function<void(Landed)> callback) {
    impl_->inbox.on_landed(std::move(callback));
}

void Peer::on_request(std::function<void(const net::PeerIdentity&, const nlohmann::json&, Responder)> handler) {
    impl_->requests.set_handler(std::move(handler));
}

void Peer::offer(const std::string& key, std::shared_ptr<const net::MessageBody> body) {
    impl_->origins.offer(key, std::move(body));
}

void Peer::withdraw(const std::string& key) { impl_->origins.withdraw(key); }

void Peer::accept_stream(std::uint64_t stream, StreamHooks hooks) { impl_->streams.accept(stream, std::move(hooks)); }

void Peer::end_stream(std::uint64_t stream) { impl_->streams.end(stream); }

std::uint64_t Peer::bulk_connect(const std::string& member) { return impl_->bulk.connect(member); }

Peer::Goodput Peer::goodput_from(const std::string& member, double seconds, double warmup, std::uint64_t max_bytes) {
    return impl_->bulk.measure(member, seconds, warmup, max_bytes);
}

Peer::Goodput Peer::goodput_from(std::uint64_t connection, double seconds, double warmup, std::uint64_t max_bytes) {
    return impl_->bulk.measure(connection, seconds, warmup, max_bytes);
}

void Peer::revoke(const std::vector<net::Revocation>& revoked) {
    Impl& d = *impl_;
    const std::vector<net::Revocation> added = d.admission.revocations().add(revoked);
    if (added.empty() || !d.transport) return;
    d.transport->close_if(
        [added](const net::PeerIdentity& who) {
            return std::any_of(added.begin(), added.end(), [&](const net::Revocation& r) { return net::revokes(r, who); });
        },
        "revoked");
}

const net::Identity& Peer::identity() const { return impl_->cfg.identity; }

std::vector<net::Revocation> Peer::revoked() const { return impl_->admission.revocations().all(); }

}  // namespace hetcast
