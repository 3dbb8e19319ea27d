// Peer's calls to other members (the answers awaited are peer_asking.cpp's), and
// describes of what a member holds.
#include "hetcast/runtime/peer.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <future>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/membership.hpp"
#include "hetcast/runtime/pieces.hpp"
#include "peer_impl.hpp"

namespace hetcast {
using namespace detail;

Peer::Described Peer::describe(const std::string& member, const std::string& origin, std::uint64_t piece,
                               const std::string& order) {
    if (member == impl_->cfg.name) {
        const auto body = impl_->origins.resolve(origin);
        return {body->size(), body->sha256(), piece > 0 ? piece_digests(*body, piece) : std::vector<net::Digest>{},
                mode_of(*body)};
    }
    json q{{"cmd", "describe"}, {"origin", origin}};
    if (piece > 0) q["piece"] = piece;
    if (!order.empty()) q["order"] = json::parse(order);
    // Digests of a large file take a read of it at the member.
    const auto timeout = piece > 0 ? std::max(impl_->cfg.connect_timeout, std::chrono::milliseconds(120000))
                                   : impl_->cfg.connect_timeout;
    const json a = call(member, q, timeout);
    if (!a.value("ok", false)) throw InputError(a.value("error", "'" + member + "' cannot describe '" + origin + "'"));
    const auto size = a.find("size");
    const auto sha = a.find("sha256");
    if (size == a.end() || !size->is_number_unsigned() || sha == a.end() || !sha->is_string()) {
        throw Error("'" + member + "' described '" + origin + "' without a size and a sha256");
    }
    if (size->get<std::uint64_t>() > impl_->cfg.max_message) throw InputError("'" + origin + "' is over the size limit");
    Described d{size->get<std::uint64_t>(), digest_from_hex(sha->get<std::string>()), {}};
    if (const auto mode = a.find("mode"); mode != a.end() && mode->is_number_unsigned() && mode->get<std::uint64_t>() <= 0777) {
        d.mode = static_cast<unsigned>(mode->get<std::uint64_t>());
    }
    if (piece > 0) {
        const auto pieces = a.find("pieces");
        if (pieces == a.end() || !pieces->is_array() || pieces->size() != piece_count(d.size, piece)) {
            throw Error("'" + member + "' described '" + origin + "' without its piece digests");
        }
        for (const auto& h : *pieces) {
            if (!h.is_string()) throw Error("'" + member + "' sent a piece digest that is not text");
            d.pieces.push_back(digest_from_hex(h.get<std::string>()));
        }
    }
    return d;
}

json Peer::call_on(const ConnectionPtr& c, const std::string& who, const json& request,
                   std::chrono::milliseconds timeout) {
    return impl_->calls.call_on(c, who, request, timeout);
}

Peer::Answers Peer::call_all(const std::vector<std::string>& members, const json& request,
                             std::chrono::milliseconds timeout) {
    return impl_->calls.call_all(members, request, timeout);
}

Peer::Answers Peer::hello_all(const std::vector<std::string>& members, std::chrono::milliseconds timeout) {
    return impl_->requests.hello_all(members, timeout);
}

std::vector<PingSample> Peer::ping(const std::string& member, const std::vector<std::size_t>& sizes, int reps) {
    return impl_->calls.ping(member, sizes, reps);
}

json Peer::call(const std::string& member, const json& request, std::chrono::milliseconds timeout) {
    return call_on(impl_->connections.conn_to(member), "'" + member + "'", request, timeout);
}

std::pair<json, std::string> Peer::call_at(const std::string& host, std::uint16_t port, const json& request,
                                           std::chrono::milliseconds timeout) {
    ConnectionPtr c = impl_->transport->connect(host, port);
    // A one-off connection: closed whether the call answers, times out or fails.
    struct Closer {
        ConnectionPtr& c;
        ~Closer() { c->close(); }
    } closer{c};
    json answer = call_on(c, host + ":" + std::to_string(port), request, timeout);
    return {std::move(answer), c->peer()};
}

std::optional<std::string> Peer::unreachable(const std::string& member) {
    try {
        (void)impl_->connections.conn_to(member);
        return std::nullopt;
    } catch (const std::exception& e) {
        return e.what();
    }
}

json answer_ping(Peer& peer, const json& request) {
    const auto target = request.value("target", std::string());
    const auto sizes = request.value("sizes", std::vector<std::size_t>{64});
    const int reps = request.value("reps", 10);
    if (sizes.empty() || sizes.size() > 16 || reps < 1 || reps > 1000) throw InputError("ping: bad sizes or reps");
    for (auto s : sizes) {
        if (s > (std::size_t{16} << 20)) throw InputError("ping: sizes are at most 16 MiB");
    }
    return {{"ok", true}, {"samples", samples_to_json(peer.ping(target, sizes, reps))}};
}

}  // namespace hetcast
