// Disseminate data from inside your own program: N hetcast nodes (here threads of one
// process on 127.0.0.1; in your application, one per process or host) form a cluster over
// a two-subnet network. Node 0 broadcasts a buffer, which every other node pops from its
// queue; then pushes a file, which lands under every other node's root, watching its
// progress; then starts a second, rate-capped push of the file and cancels it half-way.
// On loopback nothing slows the map's slow links, so pushes beat their predictions here.
//   usage: broadcast [NODES] [BUFFER_BYTES] [FILE_BYTES]
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <hetcast/net/identity.hpp>
#include <hetcast/runtime/node.hpp>
#include <hetcast/runtime/report.hpp>

namespace fs = std::filesystem;

namespace {

// Resident memory of this process (all N nodes), bytes.
std::size_t resident() {
    std::ifstream statm("/proc/self/statm");
    std::size_t pages = 0, rss = 0;
    statm >> pages >> rss;
    return rss * 4096;
}

// Files a receiving node still holds of an unfinished transfer (".hetcast-TAG.part").
std::size_t temporaries(const fs::path& root) {
    std::size_t n = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        n += it->path().filename().string().ends_with(".part");
    return n;
}

bool same_file(const fs::path& a, const fs::path& b) {
    std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
    std::vector<char> p(1 << 20), q(1 << 20);
    while (x && y) {
        x.read(p.data(), static_cast<std::streamsize>(p.size()));
        y.read(q.data(), static_cast<std::streamsize>(q.size()));
        if (x.gcount() != y.gcount() || !std::equal(p.begin(), p.begin() + x.gcount(), q.begin())) return false;
    }
    return x.eof() && y.eof();
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 4;
    const std::size_t size = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : std::size_t{8} << 20;
    const std::size_t file_size = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : std::size_t{64} << 20;
    if (n < 2 || n > 64 || size == 0 || file_size < (1 << 20)) {
        std::cerr << "broadcast: NODES must be 2..64, BUFFER_BYTES > 0, FILE_BYTES at least 1 MiB\n";
        return 2;
    }
    // The network plans are made on: fast inside a subnet, slower across (in a real
    // cluster: the map `hetcast probe` measured, loaded with Node::join(files)).
    std::vector<std::string> names;
    hetcast::Matrix latency(n, std::vector<double>(n)), bandwidth(n, std::vector<double>(n));
    for (std::size_t i = 0; i < n; ++i) {
        names.push_back("node" + std::to_string(i));
        for (std::size_t j = 0; j < n; ++j) {
            latency[i][j] = i % 2 == j % 2 ? 1e-4 : 5e-3;
            bandwidth[i][j] = i % 2 == j % 2 ? 1.25e8 : 6.25e6;
        }
    }
    const auto map = hetcast::Network::parametric(names, latency, bandwidth, std::vector<hetcast::Overhead>(n),
                                                  std::vector<hetcast::Overhead>(n));
    // Every node proves an identity the cluster's CA issued (TLS 1.3 on every connection).
    // Here the CA lives only in this process; a real cluster uses 'hetcast keys'.
    const auto ca = hetcast::net::ClusterCa::create("example");
    const fs::path base = fs::temp_directory_path() / ("hetcast-example-" + std::to_string(::getpid()));
    std::vector<hetcast::Node> nodes;  // movable: they live in a vector
    std::vector<hetcast::Member> members;
    for (const auto& name : names) {
        hetcast::PeerConfig config;
        config.name = name;
        config.identity = ca.issue(name, hetcast::net::Role::member);
        config.dest_root = base / name;
        nodes.emplace_back(config);
        nodes.back().start();  // port 0: the system picks a free one
        members.push_back({name, "127.0.0.1", nodes.back().port()});
    }
    for (auto& node : nodes) node.join(members, map);
    bool ok = true;

    // 1. A buffer: started, then waited for (nodes[0].broadcast(bytes) is the same, blocking).
    {
        auto bytes = std::make_shared<std::vector<std::byte>>(size);
        for (std::size_t i = 0; i < size; ++i) (*bytes)[i] = static_cast<std::byte>(i * 131 % 251);
        hetcast::JobHandle job = nodes[0].start_broadcast(bytes);
        const hetcast::JobReport report = job.wait();
        hetcast::print_report(std::cout, report);
        std::size_t intact = 0;
        for (std::size_t i = 1; i < n; ++i) {
            const auto got = nodes[i].receive(std::chrono::seconds(10));
            intact += got && *got->bytes == *bytes;
        }
        std::cout << "buffer: " << intact << " of " << n - 1 << " nodes hold an intact copy\n";
        ok = ok && report.ok() && intact == n - 1;
    }

    // 2. A file: read from disk piece by piece and landed under each root once its checksum
    // matches, so memory stays bounded whatever its size.
    fs::create_directories(base / "src");
    const fs::path file = base / "src" / "dataset.bin";
    {
        std::ofstream out(file, std::ios::binary);
        std::vector<char> block(1 << 20);
        for (std::size_t done = 0; done < file_size; done += block.size()) {
            for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>((done + i) * 2654435761u >> 13);
            out.write(block.data(), static_cast<std::streamsize>(std::min(block.size(), file_size - done)));
        }
    }
    std::atomic<std::size_t> peak{resident()};
    std::atomic<int> shown{-1};
    hetcast::SendOptions watch;
    watch.on_progress = [&](const hetcast::JobProgress& p) {  // on a Node thread: print, never block
        std::size_t was = peak.load();
        for (const std::size_t now = resident(); now > was && !peak.compare_exchange_weak(was, now);) {
        }
        const int tenth = p.owed ? static_cast<int>(10 * p.delivered / p.owed) : 0;
        if (tenth > shown.exchange(tenth))
            std::cerr << "  file: " << p.delivered * 100 / std::max<std::uint64_t>(p.owed, 1) << "% delivered\n";
    };
    {
        hetcast::PushFiles what;
        what.paths = {file};
        hetcast::JobHandle job = nodes[0].start_push(what, watch);
        const hetcast::JobReport report = job.wait();
        hetcast::print_report(std::cout, report);
        std::size_t intact = 0;
        for (std::size_t i = 1; i < n; ++i) intact += same_file(file, base / names[i] / "dataset.bin");
        std::cout << "file: " << intact << " of " << n - 1 << " nodes hold an intact copy; resident memory at most "
                  << peak.load() / (1 << 20) << " MiB while pushing " << file_size / (1 << 20) << " MiB\n";
        ok = ok && report.ok() && intact == n - 1;
    }

    // 3. The same file again, capped at a rate that takes about four seconds, cancelled once
    // half of it is delivered: the destinations drop what they hold of it.
    {
        hetcast::PushFiles what;
        what.paths = {file};
        what.name = "second.bin";
        hetcast::SendOptions capped;
        capped.bwlimit = file_size / 4;
        hetcast::JobHandle job = nodes[0].start_push(what, capped);
        while (!job.done()) {
            const hetcast::JobProgress p = job.progress();
            if (p.owed && p.delivered * 2 >= p.owed) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        const std::uint64_t at = job.progress().delivered;
        const bool cancelled = job.cancel("no longer wanted");
        const hetcast::JobReport report = job.wait();
        hetcast::print_report(std::cout, report);
        std::this_thread::sleep_for(std::chrono::milliseconds(500));  // a late piece would show
        std::size_t left = 0, landed = 0, broken = 0;
        for (std::size_t i = 1; i < n; ++i) {  // a destination that had it all may keep it, whole
            left += temporaries(base / names[i]);
            const fs::path copy = base / names[i] / "second.bin";
            landed += fs::exists(copy);
            broken += fs::exists(copy) && !same_file(file, copy);
        }
        std::cout << "cancelled push: cancelled at " << at * 100 / std::max<std::uint64_t>(job.progress().owed, 1)
                  << "% delivered; " << landed << " copies landed, " << left << " temporaries left\n";
        ok = ok && cancelled && !report.ok() && landed < n - 1 && broken == 0 && left == 0;
    }
    for (auto& node : nodes) node.stop();
    fs::remove_all(base);
    return ok ? 0 : 1;
}
