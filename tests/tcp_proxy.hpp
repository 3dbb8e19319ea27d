#pragma once
// A TCP proxy on 127.0.0.1 that counts the bytes it forwards each way: what crossed the
// wire, whatever the peers at either end believe. Every connection it accepts is forwarded
// to `target`; stop() (or the destructor) ends them all. hold_after(n) holds every
// connection after the first n (accepted, nothing forwarded) until release(). throttle(r)
// forwards at most r bytes/s per connection towards the target.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace hetcast::test {

class TcpProxy {
public:
    explicit TcpProxy(std::uint16_t target) : target_(target) {
        listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (listen_ < 0 || ::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_, 64) != 0 ||
            ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
            throw std::runtime_error("tcp proxy: cannot listen");
        }
        port_ = ntohs(a.sin_port);
        acceptor_ = std::thread([this] { accept_loop(); });
    }
    ~TcpProxy() { stop(); }
    TcpProxy(const TcpProxy&) = delete;
    TcpProxy& operator=(const TcpProxy&) = delete;

    [[nodiscard]] std::uint16_t port() const { return port_; }
    /// Bytes forwarded from the connecting side to the target, and back.
    [[nodiscard]] std::uint64_t forward() const { return forward_; }
    [[nodiscard]] std::uint64_t backward() const { return backward_; }

    /// Connections accepted after the first `n` forward nothing until release().
    void hold_after(std::size_t n) { hold_after_ = n; }
    void release() { released_ = true; }
    void throttle(std::uint64_t bytes_per_s) { throttle_ = bytes_per_s; }
    [[nodiscard]] std::size_t accepted() const { return accepted_; }

    void stop() {
        if (stopped_.exchange(true)) return;
        ::shutdown(listen_, SHUT_RDWR);
        acceptor_.join();
        ::close(listen_);
        std::vector<std::thread> ts;
        {
            std::lock_guard lock(mu_);
            ts = std::move(pumps_);
        }
        for (auto& t : ts) t.join();
    }

private:
    void accept_loop() {
        while (!stopped_) {
            pollfd p{listen_, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            const int in = ::accept(listen_, nullptr, nullptr);
            if (in < 0) continue;
            const int out = ::socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            a.sin_port = htons(target_);
            if (out < 0 || ::connect(out, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
                ::close(in);
                if (out >= 0) ::close(out);
                continue;
            }
            const bool held = accepted_++ >= hold_after_;
            std::lock_guard lock(mu_);
            pumps_.emplace_back([this, in, out, held] {
                while (held && !released_ && !stopped_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
                pump(in, out);
            });
        }
    }

    /// Both directions of one connection; a reset or close on either side ends both.
    void pump(int a, int b) {
        std::vector<char> buf(64 << 10);
        pollfd fds[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
        const auto began = std::chrono::steady_clock::now();
        std::uint64_t sent = 0;
        while (!stopped_) {
            if (::poll(fds, 2, 50) <= 0) continue;
            bool done = false;
            for (int i = 0; i < 2 && !done; ++i) {
                if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                const std::uint64_t rate = throttle_;
                const std::size_t want = i == 0 && rate > 0 ? std::min<std::size_t>(buf.size(), 4096) : buf.size();
                const ssize_t n = ::recv(fds[i].fd, buf.data(), want, 0);
                if (n <= 0) {
                    done = true;
                    break;
                }
                for (ssize_t at = 0; at < n;) {
                    const ssize_t w = ::send(fds[1 - i].fd, buf.data() + at, static_cast<std::size_t>(n - at), MSG_NOSIGNAL);
                    if (w <= 0) {
                        done = true;
                        break;
                    }
                    at += w;
                }
                (i == 0 ? forward_ : backward_) += static_cast<std::uint64_t>(n);
                if (i == 0 && rate > 0) {
                    sent += static_cast<std::uint64_t>(n);
                    std::this_thread::sleep_until(began + std::chrono::duration<double>(static_cast<double>(sent) / static_cast<double>(rate)));
                }
            }
            if (done) break;
        }
        // A reset passes on as a reset: the other side's kernel drops what it holds too.
        const linger reset{1, 0};
        ::setsockopt(a, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
        ::setsockopt(b, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
        ::close(a);
        ::close(b);
    }

    std::uint16_t target_;
    int listen_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stopped_{false};
    std::atomic<std::size_t> hold_after_{~std::size_t{0}};
    std::atomic<std::size_t> accepted_{0};
    std::atomic<bool> released_{false};
    std::atomic<std::uint64_t> throttle_{0};
    std::atomic<std::uint64_t> forward_{0}, backward_{0};
    std::thread acceptor_;
    std::mutex mu_;
    std::vector<std::thread> pumps_;
};

}  // namespace hetcast::test
