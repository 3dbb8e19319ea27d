// Asking other members (peer_asking.hpp): calls and pings, their answers awaited.
#include "peer_asking.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <future>
#include <string>

#include "hetcast/error.hpp"
#include "../wire/frames.hpp"

namespace hetcast::detail {
using json = nlohmann::json;
using net::ConnectionPtr;
using net::Frame;
using net::FrameHeader;
using net::FrameType;

namespace {

json await_answer(std::future<json>& answer, std::chrono::milliseconds timeout, const std::string& who,
                  const std::function<void()>& forget) {
    if (answer.wait_for(timeout) != std::future_status::ready) {
        forget();
        throw Error(who + " did not answer in " + std::to_string(timeout.count()) + " ms");
    }
    try {
        return answer.get();
    } catch (const std::future_error&) {
        throw Error("the peer stopped before " + who + " answered");
    }
}

}  // namespace

void Calls::on_ping(const ConnectionPtr& c, const Frame& f) {
    Frame pong{FrameHeader{FrameType::pong, 0, 0, f.header.message, 0}, f.payload};
    if (pong.payload.size() < sizeof(double)) pong.payload.resize(sizeof(double));
    const double t = now_s();
    std::memcpy(pong.payload.data(), &t, sizeof t);
    c->send(std::move(pong));
}

void Calls::on_pong(const Frame& f) {
    if (f.payload.size() < sizeof(double)) throw InputError("a pong without a time stamp");
    double t = 0;
    std::memcpy(&t, f.payload.data(), sizeof t);
    pings_.answer(f.header.message, {t, now_s()});
}

void Calls::on_response(const Frame& f) {
    json j = json::parse(net::as_text(f.payload));
    calls_.answer(f.header.message, std::move(j));
}

json Calls::call_on(const ConnectionPtr& c, const std::string& who, const json& request,
                    std::chrono::milliseconds timeout) {
    auto [seq, answer] = calls_.open();
    c->send(make_frame(FrameType::request, 0, seq, request.dump(-1, ' ', false, json::error_handler_t::replace)));
    return await_answer(answer, timeout, who, [this, seq = seq] { calls_.forget(seq); });
}

PeerAnswers Calls::call_all(const std::vector<std::string>& members, const json& request,
                            std::chrono::milliseconds timeout) {
    PeerAnswers out;
    out.responses.resize(members.size());
    out.errors.resize(members.size());
    std::vector<ConnectionPtr> conns(members.size());
    {
        // Connecting can take the connect timeout for a host that is off: in parallel.
        std::vector<std::future<void>> dials;
        for (std::size_t i = 0; i < members.size(); ++i) {
            conns[i] = connections_.directory().connection(members[i]);
            if (conns[i]) continue;
            dials.push_back(std::async(std::launch::async, [&, i] {
                try {
                    conns[i] = connections_.conn_to(members[i]);
                } catch (const std::exception& e) {
                    out.errors[i] = e.what();
                }
            }));
        }
    }
    const std::string text = request.dump(-1, ' ', false, json::error_handler_t::replace);
    std::vector<std::pair<std::uint32_t, std::future<json>>> asked(members.size());
    for (std::size_t i = 0; i < members.size(); ++i) {
        if (!conns[i]) continue;
        asked[i] = calls_.open();
        conns[i]->send(make_frame(FrameType::request, 0, asked[i].first, text));
    }
    const auto deadline = Clock::now() + timeout;
    for (std::size_t i = 0; i < members.size(); ++i) {
        auto& [seq, answer] = asked[i];
        if (!answer.valid()) continue;
        if (answer.wait_until(deadline) != std::future_status::ready) {
            calls_.forget(seq);
            out.errors[i] = "'" + members[i] + "' did not answer in " + std::to_string(timeout.count()) + " ms";
            continue;
        }
        try {
            out.responses[i] = answer.get();
        } catch (const std::future_error&) {
            out.errors[i] = "the peer stopped before '" + members[i] + "' answered";
        }
    }
    return out;
}

std::vector<PingSample> Calls::ping(const std::string& member, const std::vector<std::size_t>& sizes, int reps) {
    ConnectionPtr c = connections_.conn_to(member);
    std::vector<PingSample> out;
    for (std::size_t size : sizes) {
        for (int r = 0; r < reps; ++r) {
            auto [seq, answer] = pings_.open();
            const double sent = now_s();
            c->send(Frame{FrameHeader{FrameType::ping, 0, 0, seq, 0},
                          std::vector<std::byte>(std::max(size, sizeof(double)))});
            if (answer.wait_for(core_.cfg.connect_timeout) != std::future_status::ready) {
                pings_.forget(seq);
                throw Error("no answer from '" + member + "' to a ping of " + std::to_string(size) + " bytes");
            }
            std::pair<double, double> got;
            try {
                got = answer.get();
            } catch (const std::future_error&) {  // stop() dropped the promise
                throw Error("the peer stopped before '" + member + "' answered a ping");
            }
            const auto [peer_time, received] = got;
            out.push_back(PingSample{static_cast<double>(size), sent, peer_time, received});
        }
    }
    return out;
}

}  // namespace hetcast::detail
