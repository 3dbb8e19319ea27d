#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>

#include "temp_dir.hpp"
#include "hetcast/error.hpp"
#include "hetcast/runtime/config.hpp"
#include "hetcast/runtime/membership.hpp"
#include "hetcast/runtime/peer.hpp"
#include "identity.hpp"

using namespace hetcast;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text, fs::perms mode = fs::perms(0600)) {
    std::ofstream(p, std::ios::binary) << text;
    fs::permissions(p, mode);
}

/// The message of the InputError `f` throws ("" when it throws nothing).
template <typename F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

std::string daemon_error(const std::string& yaml) {
    return error_of([&] { (void)parse_daemon_config(yaml, "d.yaml", "/etc/hetcast"); });
}

std::string cluster_error(const std::string& yaml) {
    return error_of([&] { (void)parse_cluster(yaml, "c.yaml"); });
}

const std::string minimal = "name: ws01\nstate_dir: /var/lib/hetcast\ndest_root: /srv/hetcast\n"
                            "identity: /etc/hetcast/ws01.pem\n";

}  // namespace

TEST_CASE("config: a minimal daemon config takes the defaults") {
    const DaemonConfig c = parse_daemon_config(minimal, "d.yaml", "/etc/hetcast");
    CHECK(c.name == "ws01");
    CHECK(c.host == "127.0.0.1");
    CHECK(c.port == 7700);
    CHECK(c.state_dir == fs::path("/var/lib/hetcast"));
    CHECK(c.dest_root == fs::path("/srv/hetcast"));
    CHECK(c.identity_file == fs::path("/etc/hetcast/ws01.pem"));
    CHECK_FALSE(c.cluster_file.has_value());
    CHECK_FALSE(c.link_profile.has_value());
    CHECK(c.seeds.empty());
    CHECK(c.max_message == (std::uint64_t{64} << 30));
    CHECK(c.max_jobs == 8);
    CHECK(c.chunk == (std::size_t{1} << 20));
    CHECK(c.tolerance == doctest::Approx(0.2));
    CHECK(c.stall_timeout == std::chrono::milliseconds(10000));
    CHECK(c.stall_timeout == PeerConfig{}.stall_timeout);  // one default, whether a daemon or an embedded peer
    CHECK(c.down_after == std::chrono::milliseconds(2000));
    CHECK(c.log_level == LogLevel::info);
}

TEST_CASE("config: a push has no time limit unless one is configured, heartbeat and history") {
    // Issue 22: a fixed 10-minute job limit killed every long push.
    CHECK(JobSpec{}.timeout == std::chrono::milliseconds::zero());
    const DaemonConfig c = parse_daemon_config(minimal, "d.yaml", "/etc/hetcast");
    CHECK(c.job_timeout == std::chrono::milliseconds::zero());
    CHECK(c.heartbeat == std::chrono::milliseconds(5000));
    CHECK(c.history == 100);
    CHECK(parse_daemon_config(minimal + "job_timeout: none\n", "d.yaml", "/").job_timeout == std::chrono::milliseconds::zero());
    CHECK(parse_daemon_config(minimal + "job_timeout: 7200\n", "d.yaml", "/").job_timeout == std::chrono::hours(2));
    CHECK(parse_daemon_config(minimal + "heartbeat: 0.2\n", "d.yaml", "/").heartbeat == std::chrono::milliseconds(200));
    CHECK(parse_daemon_config(minimal + "history: 0\n", "d.yaml", "/").history == 0);
    CHECK(daemon_error(minimal + "job_timeout: 0\n").find("d.yaml:5:14: job_timeout") == 0);
    CHECK(daemon_error(minimal + "job_timeout: soon\n").find("d.yaml:5:14: job_timeout") == 0);
    CHECK(daemon_error(minimal + "heartbeat: 0\n").find("d.yaml:5:12: heartbeat") == 0);
    CHECK(daemon_error(minimal + "history: -1\n").find("d.yaml:5:10: history") == 0);
    CHECK(daemon_error(minimal + "history: 1000000\n").find("d.yaml:5:10: history") == 0);
}

TEST_CASE("config: every key is read") {
    const DaemonConfig c = parse_daemon_config(minimal +
                                                   "listen: 0.0.0.0:7801\n"
                                                   "cluster: cluster.yaml\n"
                                                   "seeds: [a.example:7700, '[::1]:7702']\n"
                                                   "limits: {max_message: 2GiB, max_jobs: 9}\n"
                                                   "chunk: 256KiB\n"
                                                   "piece: 4MiB\n"
                                                   "tolerance: 0.35\n"
                                                   "stall_timeout: 2.5\n"
                                                   "down_after: 0.75\n"
                                                   "umask: 027\n"
                                                   "log_level: debug\n"
                                                   "link_profile: ../profiles/p.yaml\n",
                                               "d.yaml", "/etc/hetcast");
    CHECK(c.host == "0.0.0.0");
    CHECK(c.port == 7801);
    CHECK(c.cluster_file == fs::path("/etc/hetcast/cluster.yaml"));
    CHECK(c.link_profile == fs::path("/etc/profiles/p.yaml"));
    REQUIRE(c.seeds.size() == 2);
    CHECK(c.seeds[0] == "a.example:7700");
    CHECK(c.seeds[1] == "[::1]:7702");
    CHECK(c.max_message == (std::uint64_t{2} << 30));
    CHECK(c.max_jobs == 9);
    CHECK(c.chunk == 256 * 1024);
    CHECK(c.piece == 4 << 20);
    CHECK(c.tolerance == doctest::Approx(0.35));
    CHECK(c.stall_timeout == std::chrono::milliseconds(2500));
    CHECK(c.down_after == std::chrono::milliseconds(750));
    CHECK(c.umask == 027);
    CHECK(c.log_level == LogLevel::debug);

    const DaemonConfig v6 = parse_daemon_config(minimal + "listen: '[::]:0'\nlimits: {max_message: 1000}\n",
                                                "d.yaml", "/");
    CHECK(v6.host == "::");
    CHECK(v6.port == 0);
    CHECK(v6.max_message == 1000);
}

TEST_CASE("config: relative paths are resolved against the base folder, absolute ones kept") {
    const DaemonConfig c = parse_daemon_config(
        "name: n\nstate_dir: state\ndest_root: ./dest/../files\nidentity: /abs/n.pem\n"
        "cluster: sub/cluster.yaml\n",
        "d.yaml", "/opt/hc");
    CHECK(c.state_dir == fs::path("/opt/hc/state"));
    CHECK(c.dest_root == fs::path("/opt/hc/files"));
    CHECK(c.identity_file == fs::path("/abs/n.pem"));
    CHECK(c.cluster_file == fs::path("/opt/hc/sub/cluster.yaml"));

    // load_daemon_config uses the file's folder, made absolute.
    TempDir t;
    write(t.path / "d.yaml", "name: n\nstate_dir: state\ndest_root: d\nidentity: s\n");
    const DaemonConfig l = load_daemon_config(t.path / "d.yaml");
    CHECK(l.state_dir == (t.path / "state").lexically_normal());
    CHECK(l.identity_file == (t.path / "s").lexically_normal());
    CHECK(l.state_dir.is_absolute());
}

TEST_CASE("config: an unknown key is refused with its line and column, and the known keys") {
    const std::string e = daemon_error(minimal + "limits:\n  max_jobs: 2\n  max_mesage: 1GiB\n");
    CHECK(e.find("d.yaml:7:3: ") == 0);
    CHECK(e.find("unknown key 'max_mesage'") != std::string::npos);
    CHECK(e.find("max_message") != std::string::npos);

    const std::string top = daemon_error("name: a\nstatedir: /x\n");
    CHECK(top.find("d.yaml:2:1: unknown key 'statedir'") == 0);
    CHECK(top.find('\n') == std::string::npos);
}

TEST_CASE("config: bad values carry the line and column of the value") {
    // Lines:                      1..4 are `minimal`.
    CHECK(daemon_error(minimal + "listen: 0.0.0.0\n").find("d.yaml:5:9: listen: expected HOST:PORT") == 0);
    CHECK(daemon_error(minimal + "listen: a:70000\n").find("d.yaml:5:9:") == 0);
    CHECK(daemon_error(minimal + "listen: ::1:80\n").find("d.yaml:5:9:") == 0);
    CHECK(daemon_error(minimal + "seeds:\n  - a:1\n  - b:0\n").find("d.yaml:7:5: seeds[1]") == 0);
    CHECK(daemon_error(minimal + "seeds: [a:1, a:1]\n").find("duplicate seed") != std::string::npos);
    CHECK(daemon_error(minimal + "seeds: a:1\n").find("d.yaml:5:8: seeds: expected a list") == 0);
    CHECK(daemon_error(minimal + "limits: {max_message: lots}\n").find("d.yaml:5:23: limits.max_message") == 0);
    CHECK(daemon_error(minimal + "limits: {max_jobs: 0}\n").find("d.yaml:5:20: limits.max_jobs") == 0);
    CHECK(daemon_error(minimal + "limits: {max_jobs: -3}\n").find("d.yaml:5:20:") == 0);
    CHECK(daemon_error(minimal + "limits: 5\n").find("d.yaml:5:9: limits: expected a mapping") == 0);
    CHECK(daemon_error(minimal + "chunk: 10\n").find("d.yaml:5:8: chunk: must be between") == 0);
    CHECK(daemon_error(minimal + "chunk: 1GiB\n").find("d.yaml:5:8:") == 0);
    CHECK(daemon_error(minimal + "piece: 1KiB\n").find("d.yaml:5:8: piece: must be between 4KiB and 8MiB") == 0);
    CHECK(daemon_error(minimal + "piece: 16MiB\n").find("d.yaml:5:8: piece: must be between") == 0);
    CHECK(daemon_error(minimal + "tolerance: -0.1\n").find("d.yaml:5:12: tolerance") == 0);
    CHECK(daemon_error(minimal + "tolerance: .nan\n").find("d.yaml:5:12:") == 0);
    CHECK(daemon_error(minimal + "stall_timeout: 0\n").find("d.yaml:5:16: stall_timeout") == 0);
    CHECK(daemon_error(minimal + "stall_timeout: 1e300\n").find("d.yaml:5:16:") == 0);
    CHECK(daemon_error(minimal + "down_after: 0\n").find("d.yaml:5:13: down_after") == 0);
    CHECK(daemon_error(minimal + "down_after: -1\n").find("d.yaml:5:13: down_after") == 0);
    CHECK(daemon_error(minimal + "down_after: 2s\n").find("d.yaml:5:13: down_after: expected a number, got '2s'") == 0);
    CHECK(daemon_error(minimal + "down_after: .inf\n").find("d.yaml:5:13: down_after") == 0);
    CHECK(daemon_error(minimal + "umask: 0999\n").find("d.yaml:5:8: umask: expected octal") == 0);
    CHECK(daemon_error(minimal + "umask: 01000\n").find("d.yaml:5:8: umask") == 0);
    CHECK(daemon_error(minimal + "umask: [1]\n").find("d.yaml:5:8: umask") == 0);
    CHECK(parse_daemon_config(minimal, "d.yaml", "/").tcp_congestion.empty());
    CHECK(parse_daemon_config(minimal + "tcp_congestion: bbr\n", "d.yaml", "/").tcp_congestion == "bbr");
    CHECK(daemon_error(minimal + "tcp_congestion: BBR\n").find("d.yaml:5:17: tcp_congestion: expected a congestion control like cubic or bbr, got 'BBR'") == 0);
    CHECK(daemon_error(minimal + "tcp_congestion: ''\n").find("d.yaml:5:17: tcp_congestion") == 0);
    CHECK(daemon_error(minimal + "tcp_congestion: [bbr]\n").find("d.yaml:5:17: tcp_congestion") == 0);
    CHECK(daemon_error(minimal + "tcp_congestion: a_name_too_long_x\n").find("d.yaml:5:17: tcp_congestion") == 0);
    CHECK(daemon_error(minimal + "umask: ''\n").find("d.yaml:5:8: umask") == 0);
    CHECK(daemon_error(minimal + "log_level: loud\n").find("d.yaml:5:12: log_level: expected one of trace, debug, info, warn, error, got 'loud'") == 0);
    CHECK(daemon_error(minimal + "log_level: [info]\n").find("d.yaml:5:12: log_level: expected one of") == 0);
    CHECK(daemon_error(minimal + "log_level: INFO\n").find("d.yaml:5:12: log_level") == 0);
    CHECK(daemon_error(minimal + "down_after: [2]\n").find("d.yaml:5:13: down_after") == 0);
    CHECK(daemon_error(minimal + "down_after: 0.001\n").find("d.yaml:5:13: down_after: expected seconds between 0.01 and 3600") == 0);
    CHECK(daemon_error(minimal + "down_after: 3601\n").find("d.yaml:5:13: down_after: expected seconds between") == 0);
    CHECK(daemon_error(minimal + "limits: {down_after: 2}\n").find("d.yaml:5:10: limits: unknown key 'down_after'") == 0);
    CHECK(parse_daemon_config(minimal + "down_after: 0.01\n", "d.yaml", "/").down_after == std::chrono::milliseconds(10));
    CHECK(parse_daemon_config(minimal + "down_after: 3600\n", "d.yaml", "/").down_after == std::chrono::hours(1));
    CHECK(daemon_error(minimal + "cluster: [a]\n").find("d.yaml:5:10: cluster: expected a non-empty string") == 0);
    CHECK(daemon_error(minimal + "cluster:\n").find("d.yaml:5:1: 'cluster' has no value") == 0);
    CHECK(daemon_error(minimal + "limits:\n  max_jobs: ~\n").find("d.yaml:6:3: limits: 'max_jobs' has no value") == 0);
    CHECK(daemon_error("name: 'a b'\n").find("d.yaml:1:7: name: white space") == 0);
    CHECK(daemon_error(minimal + "name: again\n").find("d.yaml:5:1: duplicate key 'name'") == 0);
}

TEST_CASE("config: missing required keys, empty and malformed documents") {
    CHECK(daemon_error("name: a\nstate_dir: s\ndest_root: d\n").find("missing key 'identity'") !=
          std::string::npos);
    CHECK(daemon_error("state_dir: s\n").find("d.yaml:1:1: missing key 'name'") == 0);
    CHECK(daemon_error("").find("d.yaml:1:1: empty config file") == 0);
    CHECK(daemon_error("- a\n- b\n").find("d.yaml:1:1: expected a mapping") == 0);
    CHECK(daemon_error("name: a\n  bad: [\n").find("d.yaml:") == 0);
    CHECK(daemon_error("a: 1\n---\nb: 2\n").find("d.yaml:3:1: expected a single YAML document") == 0);
    const std::string unreadable =
        error_of([] { (void)load_daemon_config("/nonexistent/hetcast/d.yaml"); });
    CHECK(unreadable.find("/nonexistent/hetcast/d.yaml: cannot read:") == 0);
}

TEST_CASE("config: an old secret_file is refused with the way to an identity") {
    const std::string e = daemon_error("name: a\nstate_dir: s\ndest_root: d\nsecret_file: /etc/hetcast/secret\n");
    CHECK(e.find("d.yaml:4:1:") == 0);
    CHECK(e.find("hetcast keys issue") != std::string::npos);
}

TEST_CASE("config: an identity file must be the owner's alone and hold a key with the CA's certificate") {
    TempDir t;
    const fs::path f = t.path / "n1.pem";
    const net::Identity id = test::identity("n1");
    write(f, net::identity_pem(id), fs::perms(0600));
    const net::Identity back = read_identity(f);
    CHECK(back.cert_pem == id.cert_pem);
    CHECK(back.ca_pem == id.ca_pem);
    CHECK(net::describe(back).name == "n1");

    for (const auto mode : {0640, 0604, 0660}) {
        fs::permissions(f, fs::perms(mode));
        const std::string e = error_of([&] { (void)read_identity(f); });
        CHECK(e.find("chmod 600 " + f.string()) != std::string::npos);
    }
    fs::permissions(f, fs::perms(0600));

    // Pieces missing or swapped: a key with the wrong CA, a key that fits no certificate.
    const net::Identity stranger = test::other_ca().issue("n1", net::Role::member);
    const auto bad = [&](const std::string& text, const std::string& what) {
        write(f, text, fs::perms(0600));
        const std::string e = error_of([&] { (void)read_identity(f); });
        CHECK_MESSAGE(e.find(what) != std::string::npos, e);
        CHECK(e.find(f.string() + ": ") == 0);
    };
    bad(id.key_pem + id.cert_pem + stranger.ca_pem, "not issued by the CA");
    bad(stranger.key_pem + id.cert_pem + id.ca_pem, "belongs to neither");
    bad(id.cert_pem + id.ca_pem, "no private key");
    bad(id.key_pem + id.cert_pem, "expected 2 certificates");
    bad("just text\n", "no private key");
    CHECK(error_of([&] { (void)read_identity(t.path / "missing.pem"); }).find("cannot read") != std::string::npos);
    CHECK(error_of([&] { (void)read_identity(t.path); }).find("not a regular file") != std::string::npos);
}

TEST_CASE("config: a revocation list round-trips and bad ones are refused with their line") {
    TempDir t;
    const std::vector<net::Revocation> r{{"n3", 1764064800, R"({"cmd":"leave","name":"n3","order":{"sig":"ab"}})"},
                                         {"ws-07", 1, ""}};
    save_revoked(t.path / "revoked.yaml", r);
    const auto back = load_revoked(t.path / "revoked.yaml");
    CHECK(back == r);
    REQUIRE(back.size() == 2);
    CHECK(back[0].order == r[0].order);
    CHECK(back[1].order.empty());
    CHECK(error_of([] { (void)parse_revoked("revoked:\n  - {name: a}\n", "r.yaml"); }).find("r.yaml:2:") == 0);
    CHECK(error_of([] { (void)parse_revoked("revoked:\n  - {name: a, since: soon}\n", "r.yaml"); })
              .find("since: expected seconds") != std::string::npos);
    CHECK(error_of([] { (void)parse_revoked("revoked: 3\n", "r.yaml"); }).find("expected a list") != std::string::npos);
}

TEST_CASE("config: a cluster file is parsed in order") {
    const auto m = parse_cluster("members:\n  - {name: a, host: 10.0.0.1, port: 7700}\n"
                                 "  - name: b\n    host: h.example\n    port: 1\n",
                                 "c.yaml");
    REQUIRE(m.size() == 2);
    CHECK(m[0].name == "a");
    CHECK(m[0].host == "10.0.0.1");
    CHECK(m[0].port == 7700);
    CHECK(m[1].name == "b");
    CHECK(m[1].host == "h.example");
    CHECK(m[1].port == 1);
    // The same host on two ports is fine.
    CHECK(parse_cluster("members: [{name: a, host: h, port: 1}, {name: b, host: h, port: 2}]", "c").size() == 2);
}

TEST_CASE("config: cluster errors carry line and column") {
    const std::string head = "members:\n  - {name: a, host: h, port: 7700}\n";  // lines 1-2
    CHECK(cluster_error(head + "  - {name: a, host: g, port: 7700}\n").find("c.yaml:3:12: members[1]: duplicate member name 'a'") == 0);
    CHECK(cluster_error(head + "  - {name: b, host: h, port: 7700}\n").find("c.yaml:3:5: members[1]: duplicate address 'h:7700'") == 0);
    CHECK(cluster_error(head + "  - {name: b, host: h, port: 0}\n").find("c.yaml:3:30: members[1].port: expected a port in 1..65535") == 0);
    CHECK(cluster_error(head + "  - {name: b, host: h, port: 65536}\n").find("c.yaml:3:30:") == 0);
    CHECK(cluster_error(head + "  - {name: b, host: h, port: x}\n").find("c.yaml:3:30:") == 0);
    CHECK(cluster_error(head + "  - {name: b, port: 1}\n").find("c.yaml:3:5: members[1]: missing key 'host'") == 0);
    CHECK(cluster_error(head + "  - name: b\n    host: h\n    prot: 1\n").find("c.yaml:5:5: members[1]: unknown key 'prot'") == 0);
    CHECK(cluster_error(head + "  - just-a-name\n").find("c.yaml:3:5: members[1]: expected a mapping") == 0);
    CHECK(cluster_error("members: []\n").find("c.yaml:1:10: members: a cluster needs at least one member") == 0);
    CHECK(cluster_error("nodes: []\n").find("c.yaml:1:1: unknown key 'nodes'") == 0);
    CHECK(cluster_error("{}\n").find("c.yaml:1:1: missing key 'members'") == 0);
    CHECK(cluster_error("").find("c.yaml:1:1: empty cluster file") == 0);
}

TEST_CASE("config: a cluster file's groups are node sets, bad ones and cycles are refused with their line") {
    const std::string head = "members:\n  - {name: ws01, host: h, port: 1}\ngroups:\n";  // lines 1-3
    const ClusterFile f = parse_cluster_file(head + "  lab-a: ws[01-02]\n  labs: '@lab-a,@lab-b!@subnet:1'\n"
                                                    "  lab-b: \"ws[10-11]\"\n  all.ws_2: '@*'\n",
                                             "c.yaml");
    CHECK(f.members.size() == 1);
    CHECK(f.groups == NodeGroups{{"lab-a", "ws[01-02]"}, {"labs", "@lab-a,@lab-b!@subnet:1"}, {"lab-b", "ws[10-11]"},
                                 {"all.ws_2", "@*"}});
    CHECK(parse_cluster_file(head.substr(0, head.size() - 8), "c.yaml").groups.empty());
    CHECK(parse_cluster(head + "  a: b\n", "c.yaml").size() == 1);

    const auto error = [&](const std::string& groups) { return cluster_error(head + groups); };
    CHECK(error("  a: '@a'\n") == "c.yaml:4:6: groups.a: group '@a' refers to itself (@a -> @a)");
    CHECK(error("  a: n1\n  b: '@c,n2'\n  c: 'n3!@b'\n") ==
          "c.yaml:5:6: groups.b: group '@b' refers to itself (@b -> @c -> @b)");
    CHECK(error("  a: '@lab'\n") == "c.yaml:4:6: groups.a: no group '@lab' (the map's groups: @subnet:N, @*; the cluster file's groups: @a)");
    CHECK(error("  a: 'n[1-'\n") == "c.yaml:4:6: groups.a: node set 'n[1-': a '[' without its ']'");
    CHECK(error("  a: [n1, n2]\n").find("c.yaml:4:6: groups.a: expected a non-empty string") == 0);
    CHECK(error("  'subnet:1': n1\n").find("c.yaml:4:3: groups: 'subnet:1' is not a group name") == 0);
    CHECK(error("  -a: n1\n").find("c.yaml:4:3: groups: '-a' is not a group name") == 0);
    CHECK(error("  a: n1\n  a: n2\n").find("c.yaml:5:3: groups: duplicate group 'a'") == 0);
    CHECK(error("  a:\n").find("c.yaml:4:3: groups: 'a' has no value") == 0);
    CHECK(cluster_error(head + "  - a\n").find("c.yaml:4:3: groups: expected a mapping") == 0);
}

TEST_CASE("config: save_cluster then load_cluster gives the same members, atomically") {
    TempDir t;
    const fs::path f = t.path / "cluster.yaml";
    std::vector<Member> members = {{"a", "127.0.0.1", 7701},
                                   {"b-2", "::1", 65535},
                                   {"weird:name#1\"'", "host.example", 1},
                                   {"yes", "10.0.0.3", 22}};
    save_cluster(f, members);
    auto back = load_cluster(f);
    REQUIRE(back.size() == members.size());
    for (std::size_t i = 0; i < members.size(); ++i) {
        CHECK(back[i].name == members[i].name);
        CHECK(back[i].host == members[i].host);
        CHECK(back[i].port == members[i].port);
    }
    // Overwrite: the new content replaces the old, no temporary file is left behind.
    members.pop_back();
    save_cluster(f, members);
    CHECK(load_cluster(f).size() == 3);
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(t.path)) ++files;
    CHECK(files == 1);

    // What could not be read back is not written, and the old file stays.
    CHECK_THROWS_AS(save_cluster(f, {{"a", "h", 1}, {"a", "g", 2}}), InputError);
    CHECK_THROWS_AS(save_cluster(f, {{"a", "h", 0}}), InputError);
    CHECK(load_cluster(f).size() == 3);
    // A folder that does not exist: an error, nothing created.
    CHECK_THROWS_AS(save_cluster(t.path / "no" / "c.yaml", {{"a", "h", 1}}), Error);
}

TEST_CASE("config: the shipped examples in conf/ load") {
    const fs::path conf = fs::path(HETCAST_SOURCE_DIR) / "conf";
    const DaemonConfig c = load_daemon_config(conf / "hetcastd.yaml");
    CHECK(c.name == "ws01");
    CHECK(c.host == "0.0.0.0");
    CHECK(c.port == 7700);
    CHECK(c.state_dir == fs::path("/var/lib/hetcast"));
    CHECK(c.dest_root == fs::path("/srv/hetcast"));
    CHECK(c.identity_file.parent_path() == fs::path("/etc/hetcast"));
    CHECK(c.cluster_file == fs::path("/etc/hetcast/cluster.yaml"));
    CHECK(c.down_after == std::chrono::milliseconds(2000));

    const auto members = load_cluster(conf / "cluster.yaml");
    CHECK(members.size() == 3);
    // The daemon example's name is one of the example cluster's members.
    CHECK(std::any_of(members.begin(), members.end(), [&](const Member& m) { return m.name == c.name; }));

    // The systemd unit runs the daemon on the example's path and may write its folders.
    std::ifstream unit(conf / "hetcastd.service");
    const std::string text((std::istreambuf_iterator<char>(unit)), std::istreambuf_iterator<char>());
    CHECK(text.find("ExecStart=/usr/local/bin/hetcastd --config /etc/hetcast/hetcastd.yaml") != std::string::npos);
    CHECK(text.find("ReadWritePaths=" + c.state_dir.string() + " " + c.dest_root.string()) != std::string::npos);
}

TEST_CASE("config: texts yaml-cpp 0.7's LoadAll never returns on are refused in one line (fuzz finding)") {
    // tests/fuzz/crashes/{daemon_config,cluster}-1: a ',' where a document starts.
    for (const std::string& bad : std::vector<std::string>{",", " ,", "#x\n,", ",a", "&a ,", "--- ,", minimal + "---\n,"}) {
        CAPTURE(bad);
        const std::string d = daemon_error(bad), c = cluster_error(bad);
        CHECK(d.rfind("d.yaml:", 0) == 0);
        CHECK(c.rfind("c.yaml:", 0) == 0);
        CHECK(d.find('\n') == std::string::npos);
    }
    CHECK(daemon_error(minimal + "---\n,").find("expected a single YAML document") != std::string::npos);
}

TEST_CASE("log: parse_log_level takes the five level names (and 'warning') and nothing else") {
    CHECK(parse_log_level("trace") == LogLevel::trace);
    CHECK(parse_log_level("debug") == LogLevel::debug);
    CHECK(parse_log_level("info") == LogLevel::info);
    CHECK(parse_log_level("warn") == LogLevel::warn);
    CHECK(parse_log_level("warning") == LogLevel::warn);
    CHECK(parse_log_level("error") == LogLevel::error);
    // Random words over the names' letters (near misses: prefixes, case, extra letters).
    const std::set<std::string> names{"trace", "debug", "info", "warn", "warning", "error"};
    const std::string letters = "tracebugdinfowlgERI ";
    std::mt19937 rng(16);
    for (int i = 0; i < 20000; ++i) {
        std::string s(rng() % 8, ' ');
        for (char& c : s) c = letters[rng() % letters.size()];
        if (rng() % 4 == 0) s = *std::next(names.begin(), static_cast<long>(rng() % names.size())) + s.substr(0, rng() % 2);
        CAPTURE(s);
        CHECK(parse_log_level(s).has_value() == (names.count(s) == 1));
    }
}

TEST_CASE("config: metrics is HOST:PORT, off by default") {
    CHECK_FALSE(parse_daemon_config(minimal, "d.yaml", "/etc/hetcast").metrics.has_value());
    const DaemonConfig c = parse_daemon_config(minimal + "metrics: 127.0.0.1:9464\n", "d.yaml", "/etc/hetcast");
    REQUIRE(c.metrics.has_value());
    CHECK(c.metrics->first == "127.0.0.1");
    CHECK(c.metrics->second == 9464);
    CHECK(daemon_error(minimal + "metrics: 9464\n").find("d.yaml:5:10: metrics: expected HOST:PORT") == 0);
}

TEST_CASE("config: of the cluster file and members.yaml the newer member list wins, the difference named") {
    const std::vector<Member> file{{"a", "10.0.0.1", 7700}, {"b", "10.0.0.2", 7700}, {"c", "10.0.0.3", 7700}};
    const std::vector<Member> stored{{"a", "10.0.0.1", 7700}, {"b", "10.0.0.9", 7700}, {"d", "10.0.0.4", 7700}};
    const MemberListChoice edited = choose_member_list(file, stored, true);
    CHECK(edited.from_cluster_file);
    REQUIRE(edited.members.size() == 3);
    CHECK(edited.members[2].name == "c");
    CHECK(edited.added == std::vector<std::string>{"c"});
    CHECK(edited.removed == std::vector<std::string>{"d"});
    CHECK(edited.moved == std::vector<std::string>{"b"});
    CHECK(describe_member_list_choice(edited, "cluster.yaml", "members.yaml") ==
          "member list: cluster.yaml was edited after the last join or leave (members.yaml), and wins: added 'c'; "
          "removed 'd'; new address for 'b'");
    const MemberListChoice kept = choose_member_list(file, stored, false);
    CHECK_FALSE(kept.from_cluster_file);
    CHECK(kept.members[2].name == "d");
    CHECK(kept.added == std::vector<std::string>{"d"});
    CHECK(kept.removed == std::vector<std::string>{"c"});
    CHECK(describe_member_list_choice(kept, "cluster.yaml", "members.yaml").find("wins over it: joined 'd'; left 'c'") !=
          std::string::npos);
    CHECK(describe_member_list_choice(choose_member_list(file, file, false), "c", "m").empty());
}
