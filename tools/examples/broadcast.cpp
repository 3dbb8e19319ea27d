// Disseminate a buffer from inside your own program: N hetcast nodes (here threads of one
// process on 127.0.0.1; in your application, one per process or host) form a cluster over
// a two-subnet network, node 0 broadcasts, every other node pops the buffer from its queue.
//   usage: broadcast [NODES] [BYTES]
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <hetcast/net/identity.hpp>
#include <hetcast/runtime/node.hpp>
#include <hetcast/runtime/report.hpp>

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 5;
    const std::size_t size = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : std::size_t{8} << 20;
    if (n < 2 || n > 64) {
        std::cerr << "broadcast: NODES must be 2..64\n";
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
    std::vector<hetcast::Node> nodes;  // movable: they live in a vector
    std::vector<hetcast::Member> members;
    for (const auto& name : names) {
        hetcast::PeerConfig config;
        config.name = name;
        config.identity = ca.issue(name, hetcast::net::Role::member);
        config.dest_root = std::filesystem::temp_directory_path() / ("hetcast-example-" + name);
        nodes.emplace_back(config);
        nodes.back().start();  // port 0: the system picks a free one
        members.push_back({name, "127.0.0.1", nodes.back().port()});
    }
    for (auto& node : nodes) node.join(members, map);

    auto bytes = std::make_shared<std::vector<std::byte>>(size);
    for (std::size_t i = 0; i < size; ++i) (*bytes)[i] = static_cast<std::byte>(i * 131 % 251);
    // Started, watched, then waited for (nodes[0].broadcast(bytes) is the same, blocking).
    hetcast::SendOptions options;  // algorithm "auto", no rate limit, no timeout
    options.on_progress = [](const hetcast::JobProgress& p) {
        std::cerr << "delivered " << p.delivered << " of " << p.owed << " bytes\n";
    };
    hetcast::JobHandle job = nodes[0].start_broadcast(bytes, options);
    const hetcast::JobReport report = job.wait();  // or job.wait_for(...), job.cancel()
    hetcast::print_report(std::cout, report);

    std::size_t intact = 0;
    for (std::size_t i = 1; i < n; ++i) {
        const auto got = nodes[i].receive(std::chrono::seconds(10));
        intact += got && *got->bytes == *bytes;
    }
    std::cout << intact << " of " << n - 1 << " nodes hold an intact copy\n";
    return report.ok() && intact == n - 1 ? 0 : 1;
}
