// `hetcast status`, `hetcast probe`, `hetcast map show`: the commands that ask the
// daemons about the cluster and its measured map.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "daemon_link.hpp"
#include "hetcast/error.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/model/units.hpp"
#include "hetcast/report/json_output.hpp"
#include "hetcast/runtime/config.hpp"

namespace po = boost::program_options;
using json = nlohmann::json;

namespace hetcast::cli {
namespace {

/// "42s", "3m 12s", "5h 03m", "2d 4h".
std::string human_age(double seconds) {
    const long s = std::lround(std::max(0.0, seconds));
    char buf[48];
    if (s < 60) {
        std::snprintf(buf, sizeof buf, "%lds", s);
    } else if (s < 3600) {
        std::snprintf(buf, sizeof buf, "%ldm %02lds", s / 60, s % 60);
    } else if (s < 86400) {
        std::snprintf(buf, sizeof buf, "%ldh %02ldm", s / 3600, s % 3600 / 60);
    } else {
        std::snprintf(buf, sizeof buf, "%ldd %ldh", s / 86400, s % 86400 / 3600);
    }
    return buf;
}

std::string subnet_line(const json& names) {
    std::string line;
    for (const auto& n : names) line += ' ' + (n.is_string() ? n.get<std::string>() : n.dump());
    return line;
}

/// A table whose first column is the row name; every column as wide as its widest cell.
void print_table(std::ostream& out, const std::vector<std::string>& names, const std::vector<std::vector<std::string>>& cells) {
    const std::size_t n = names.size();
    std::vector<std::size_t> width(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
        width[0] = std::max(width[0], names[i].size());
        width[i + 1] = std::max(width[i + 1], names[i].size());
        for (std::size_t j = 0; j < n; ++j) width[j + 1] = std::max(width[j + 1], cells[i][j].size());
    }
    const auto pad = [&out](const std::string& s, std::size_t w, bool right) {
        if (right) out << std::string(w - s.size(), ' ') << s;
        else out << s << std::string(w - s.size(), ' ');
    };
    out << "  ";
    pad("", width[0], false);
    for (std::size_t j = 0; j < n; ++j) {
        out << "  ";
        pad(names[j], width[j + 1], true);
    }
    out << '\n';
    for (std::size_t i = 0; i < n; ++i) {
        out << "  ";
        pad(names[i], width[0], false);
        for (std::size_t j = 0; j < n; ++j) {
            out << "  ";
            pad(cells[i][j], width[j + 1], true);
        }
        out << '\n';
    }
}

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string dot_id(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + '"';
}

std::string mbit(double bytes_per_s) { return std::isfinite(bytes_per_s) ? fixed(bytes_per_s * 8 / 1e6, 1) : "-"; }

/// The `measured_at:` value of a map file, without quotes; empty when it has none.
std::string measured_at(const std::string& map_text) {
    std::string measured;
    std::istringstream lines(map_text);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("measured_at:", 0) == 0) {
            measured = line.substr(12);
            measured.erase(0, measured.find_first_not_of(" \"'"));
            measured.erase(measured.find_last_not_of(" \"'\r") + 1);
        }
    }
    return measured;
}

/// "  0: a1 a2 a3   uplink 40.0 Mbit/s", one line per subnet.
void print_subnets(std::ostream& out, const Network& net) {
    const Subnets subnets = net.subnets().value_or(Subnets{});
    const auto& c = net.capacities();
    std::vector<std::string> lines;
    std::size_t w = 0;
    for (std::size_t s = 0; s < subnets.size(); ++s) {
        std::string line = "  " + std::to_string(s) + ":";
        for (NodeId id : subnets[s]) line += ' ' + net.name(id);
        w = std::max(w, line.size());
        lines.push_back(std::move(line));
    }
    for (std::size_t s = 0; s < subnets.size(); ++s) {
        out << lines[s];
        if (c && s < c->uplink.size()) {
            out << std::string(w - lines[s].size() + 3, ' ') << "uplink "
                << (std::isfinite(c->uplink[s]) ? mbit(c->uplink[s]) + " Mbit/s" : "not a bottleneck");
        }
        out << '\n';
    }
}

/// Each member's NIC rates (Mbit/s), when the map has capacities.
void print_nics(std::ostream& out, const Network& net) {
    const auto& c = net.capacities();
    if (!c) return;
    std::size_t w = 0;
    for (const auto& n : net.names()) w = std::max(w, n.size());
    out << "NICs (Mbit/s; -: unconstrained):\n";
    for (NodeId i = 0; i < net.size(); ++i) {
        out << "  " << net.name(i) << std::string(w - net.name(i).size(), ' ') << "  out " << std::setw(7) << mbit(c->egress[i])
            << "  in " << std::setw(7) << mbit(c->ingress[i]);
        if (std::isfinite(c->disk[i])) out << "  disk " << std::setw(7) << mbit(c->disk[i]);
        out << '\n';
    }
}

}  // namespace

/// Whether every member listed answered (status exits 4 otherwise: see hetcast(1)).
bool all_up(const json& members) {
    return std::all_of(members.begin(), members.end(), [](const json& m) { return m.value("up", false); });
}

int cmd_status(const std::vector<std::string>& args) {
    DaemonOptions d;
    std::string nodes, exclude;
    po::options_description opts("hetcast status: the members, whether each daemon is up, its version, and the map's age\n\n"
                                 "  hetcast status [-w NODESET] [-x NODESET] [--config FILE] [--from NODE] [--json]\n\noptions");
    opts.add_options()("help,h", "show this help")("json", "print the daemon's answer as one JSON object")(
        "nodes,w", po::value(&nodes), "only these members: a node set, as for 'push --to' (@group, @subnet:N, ...)")(
        "exclude,x", po::value(&exclude), "leave out the members this node set names");
    add_daemon_options(opts, d);
    po::variables_map vm;
    if (parse_options(args, opts, vm)) return 0;

    const auto client = connect_daemon(d);
    json a = checked(client->call({{"cmd", "status"}}), "status");
    if (vm.count("nodes") || vm.count("exclude")) {
        std::vector<std::string> names;
        for (const auto& m : a.value("members", json::array())) names.push_back(str(m, "name"));
        const auto kept = select_nodes(d, *client, names, nodes, exclude);
        json rows = json::array();
        for (const auto& m : a.value("members", json::array())) {
            if (std::find(kept.begin(), kept.end(), str(m, "name")) != kept.end()) rows.push_back(m);
        }
        a["members"] = rows;
    }
    if (vm.count("json")) {
        json out = json_document("status");
        out["asked"] = {{"name", str(a, "name", "?")}, {"version", str(a, "version", "?")}};
        out["members"] = a.value("members", json::array());
        out["map_age"] = a.contains("map_age") && a["map_age"].is_number() ? a["map_age"] : json(nullptr);
        out["unmapped"] = a.value("unmapped", json::array());
        std::cout << dump_json(out) << '\n';
        return all_up(out["members"]) ? exit_ok : exit_partial;
    }
    const json members = a.value("members", json::array());
    std::vector<std::vector<std::string>> rows{{"NAME", "ADDRESS", "STATE", "VERSION"}};
    std::size_t up = 0;
    for (const auto& m : members) {
        const bool is_up = m.value("up", false);
        up += is_up ? 1 : 0;
        const std::string addr = str(m, "host", "?") + ':' + (m.contains("port") ? m["port"].dump() : "?");
        rows.push_back({str(m, "name", "?"), addr, is_up ? "up" : "down", is_up ? str(m, "version", "?") : "-"});
    }
    std::vector<std::size_t> width(4, 0);
    for (const auto& r : rows) {
        for (std::size_t c = 0; c < 4; ++c) width[c] = std::max(width[c], r[c].size());
    }
    for (const auto& r : rows) {
        std::string line;
        for (std::size_t c = 0; c < 4; ++c) line += r[c] + std::string(c < 3 ? width[c] - r[c].size() + 2 : 0, ' ');
        std::cout << line << '\n';
    }
    if (members.empty() && !vm.count("nodes") && !vm.count("exclude")) std::cout << "(no cluster file: only '" << str(a, "name", "?") << "' is known)\n";
    std::cout << up << " of " << members.size() << " up (asked '" << str(a, "name", "?") << "')\n";
    const auto now = static_cast<std::int64_t>(std::time(nullptr));
    for (const auto& m : members) {
        if (!m.contains("expires") || !m["expires"].is_number_integer()) continue;
        const std::int64_t left = m["expires"].get<std::int64_t>() - now;
        if (left >= 30 * 86400) continue;
        std::cout << "warning: the certificate of '" << str(m, "name", "?") << "' "
                  << (left <= 0 ? std::string("has expired") : "expires in " + std::to_string(left / 86400) + " days")
                  << " (hetcast keys issue " << str(m, "name", "?") << " --force, then restart its daemon)\n";
    }
    const auto age = a.find("map_age");
    if (age != a.end() && age->is_number()) {
        std::cout << "map: measured " << human_age(age->get<double>()) << " ago";
        std::string unmapped;
        for (const auto& n : a.value("unmapped", json::array())) unmapped += (unmapped.empty() ? "" : ", ") + n.get<std::string>();
        if (!unmapped.empty()) std::cout << "; not in it: " << unmapped << " (probe again to include)";
        std::cout << '\n';
    } else {
        std::cout << "map: no map (run 'hetcast probe')\n";
    }
    return all_up(members) ? exit_ok : exit_partial;
}

int cmd_probe(const std::vector<std::string>& args) {
    DaemonOptions d;
    std::string output, sizes, refresh, refresh_uplink, trace;
    int reps = 10, repeats = 3;
    std::size_t structure_from = 21;
    double tolerance = 0.2, seconds = 0.3;
    po::options_description opts(
        "hetcast probe: the daemons measure the cluster and store the map on every member: latency by\n"
        "64-byte pings; NIC rates, subnets and their uplinks by bulk TCP transfers run together\n"
        "(docs/protocol.md, \"Probing\")\n\n"
        "  hetcast probe [--config FILE] [--from NODE] [--seconds 0.3] [--repeats 3] [--tolerance 0.2]\n"
        "                [--reps 10] [--structure-from 21] [--refresh NAME,...] [--refresh-uplink NAME,...]\n"
        "                [-o map.yaml] [--trace FILE] [--json]\n\noptions");
    opts.add_options()("help,h", "show this help")(
        "seconds", po::value(&seconds), "length of each bulk transfer (uplinks: twice as long); the receiver counts after 0.1 s (default 0.3)")(
        "repeats", po::value(&repeats), "passes over every measurement; medians count (default 3)")(
        "tolerance,t", po::value(&tolerance), "ECO subnet tolerance (default 0.2)")(
        "reps", po::value(&reps), "64-byte pings per pair; the least round trip gives the latency (default 10)")(
        "structure-from", po::value(&structure_from),
        "from this many members on, find the subnets first and measure O(n) flows instead of every pair\n"
        "(default 21; 0: never)")(
        "refresh", po::value(&refresh),
        "measure only these members again (comma-separated; a machine replaced, a NIC changed): each against\n"
        "a member of every subnet, its place and rates in the map replaced, the rest kept (a probed map only)")(
        "refresh-uplink", po::value(&refresh_uplink),
        "measure only the uplinks of these members' subnets again (comma-separated; a router or link changed):\n"
        "flows out of and into each at once, the rest of the map kept (a probed map with two subnets or more)")(
        "output,o", po::value(&output), "also write the map (a network file) here")(
        "trace", po::value(&trace),
        "write every measurement (its step, each flow's sender, receiver and rate in bytes/s; null: not rated)\n"
        "to FILE as JSON: why the probe placed a member where it did")(
        "json", "print the map (nodes, subnets, latency, bandwidth, capacity) and the findings (notes, the median\n"
                "goodput of every pair in the pair rounds, ...) as JSON");
    add_daemon_options(opts, d);
    // Older scripts pass these: measurements are always parallel, and sizes are no longer used.
    po::options_description old;
    old.add_options()("sizes", po::value(&sizes))("parallel", "");
    po::options_description all;
    all.add(opts).add(old);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).run(), vm);
    if (vm.count("help")) {
        std::cout << opts;
        return 0;
    }
    po::notify(vm);
    if (vm.count("sizes")) std::cerr << "hetcast probe: --sizes is ignored (bandwidth comes from bulk transfers now)\n";
    if (reps < 1 || reps > 1000) throw InputError("--reps must be between 1 and 1000");
    if (repeats < 1 || repeats > 100) throw InputError("--repeats must be between 1 and 100");
    if (!(seconds >= 0.05) || seconds > 10) throw InputError("--seconds must be between 0.05 and 10");
    if (!(tolerance >= 0) || tolerance > 10) throw InputError("--tolerance must be between 0 and 10");

    json req{{"cmd", "probe"}, {"reps", reps}, {"repeats", repeats}, {"seconds", seconds}, {"tolerance", tolerance},
             {"structure_hosts", structure_from}};
    const auto names_of = [](const std::string& option, const std::string& list) {
        json names = json::array();
        for (std::size_t at = 0; at <= list.size();) {
            const std::size_t comma = std::min(list.find(',', at), list.size());
            if (comma == at) throw InputError("--" + option + ": an empty name in '" + list + "'");
            names.push_back(list.substr(at, comma - at));
            at = comma + 1;
        }
        return names;
    };
    if (vm.count("refresh")) req["refresh"] = names_of("refresh", refresh);
    if (vm.count("refresh-uplink")) req["refresh_uplinks"] = names_of("refresh-uplink", refresh_uplink);
    if (!trace.empty()) {
        if (vm.count("refresh") || vm.count("refresh-uplink")) throw InputError("--trace: only a whole probe is traced");
        req["trace"] = true;
    }
    const bool tty = ::isatty(STDERR_FILENO) != 0;
    auto client = connect_daemon(d);
    const json a = client->call(req, [tty](const json& p) {
        const json& pr = p.contains("progress") ? p["progress"] : p;
        if (!tty) return;
        if (pr.contains("pairs") && pr.contains("of")) {
            std::cerr << "\r\033[Kprobing: pinged " << pr["pairs"].dump() << " of " << pr["of"].dump() << " pairs" << std::flush;
        } else if (pr.contains("measurements")) {
            std::cerr << "\r\033[Kprobing: " << str(pr, "phase", "?") << ", " << pr["measurements"].dump()
                      << " measurements so far" << std::flush;
        }
    });
    if (tty) std::cerr << "\r\033[K" << std::flush;

    const std::string map = str(a, "map");
    if (!output.empty() && !map.empty()) write_file_atomically(output, map);
    if (!trace.empty()) write_file_atomically(trace, dump_json(a.value("trace", json::array())) + "\n");
    if (!a.value("ok", false)) {
        std::string err = str(a, "error", "the probe failed");
        const json missing = a.value("not_updated", json::array());
        if (!missing.empty()) err += ":" + subnet_line(missing);
        throw Error(err);
    }
    const Network net = parse_network(map, "the probed map");
    const json notes = a.value("notes", json::array());
    // Members that did not answer are not in the map: a warning, not a failure (exit 0).
    json unreachable = json::array();
    for (const auto& u : a.value("unreachable", json::array())) {
        unreachable.push_back({{"name", str(u, "name", "?")}, {"error", str(u, "error", "?")}});
    }
    if (!unreachable.empty()) {
        std::string names;
        for (const auto& u : unreachable) names += (names.empty() ? "" : ", ") + str(u, "name");
        std::cerr << "hetcast probe: warning: " << unreachable.size() << " member" << (unreachable.size() == 1 ? "" : "s")
                  << " did not answer and " << (unreachable.size() == 1 ? "is" : "are") << " not in the map: " << names
                  << "; probe again once " << (unreachable.size() == 1 ? "it is" : "they are") << " up\n";
    }
    if (vm.count("json")) {
        json out = json_document("probe");
        out["map"] = map_json(net, measured_at(map));
        for (const char* key : {"seconds", "measurements", "measured_seconds", "times", "pairs", "offsets", "notes", "doubts", "goodput"}) {
            if (a.contains(key)) out[key] = a[key];
        }
        out["tolerance"] = tolerance;
        out["unreachable"] = unreachable;
        std::cout << dump_json(out) << '\n';
        return 0;
    }
    const Subnets subnets = net.subnets().value_or(Subnets{});
    std::cout << "probed " << net.size() << " members in " << fixed(a.value("seconds", 0.0), 1) << " s ("
              << a.value("measurements", 0) << " measurements, " << fixed(a.value("measured_seconds", 0.0), 1)
              << " s of transfers); " << subnets.size() << " subnet"
              << (subnets.size() == 1 ? "" : "s") << " at tolerance " << tolerance << ":\n";
    if (a.contains("times")) {
        const json& t = a["times"];
        std::cout << "time: pinging " << a.value("pairs", 0) << " pairs " << fixed(t.value("latency", 0.0), 1)
                  << " s, measurements: set-up " << fixed(t.value("setup", 0.0), 1) << " s, measuring "
                  << fixed(t.value("measuring", 0.0), 1) << " s (waiting for first bytes "
                  << fixed(t.value("first_bytes", 0.0), 1) << " s, for answers after the last bytes "
                  << fixed(t.value("answers", 0.0), 1) << " s); the rest " << fixed(t.value("answering", 0.0) + t.value("other", 0.0) + t.value("storing", 0.0), 1)
                  << " s\n";
    }
    print_subnets(std::cout, net);
    print_nics(std::cout, net);
    if (!unreachable.empty()) {
        std::cout << "not measured (did not answer):\n";
        for (const auto& u : unreachable) std::cout << "  " << str(u, "name") << ": " << str(u, "error") << '\n';
    }
    if (!notes.empty()) {
        std::cout << "notes:\n";
        for (const auto& note : notes) std::cout << "  " << (note.is_string() ? note.get<std::string>() : note.dump()) << '\n';
    }
    std::cout << "clock offsets (member's clock minus the prober's):\n";
    const json offsets = a.value("offsets", json::object());
    std::size_t w = 0;
    for (const auto& [name, v] : offsets.items()) w = std::max(w, name.size());
    for (const auto& [name, v] : offsets.items()) {
        const double ms = v.is_number() ? v.get<double>() * 1e3 : 0.0;
        std::cout << "  " << name << std::string(w - name.size(), ' ') << "  " << (ms >= 0 ? "+" : "") << fixed(ms, 3)
                  << " ms\n";
    }
    if (!output.empty()) std::cout << "map written to " << output << '\n';
    return 0;
}

int cmd_map_show(const std::vector<std::string>& args) {
    DaemonOptions d;
    po::options_description opts("hetcast map show: the daemons' current map: subnets and uplinks, NIC rates, latency and\n"
                                 "bandwidth\n\n"
                                 "  hetcast map show [--config FILE] [--from NODE] [--dot | --json]\n\noptions");
    opts.add_options()("help,h", "show this help")("dot", "print a Graphviz graph (one cluster per subnet) instead")(
        "json", "print the map (nodes, latency, bandwidth, overheads, subnets, capacity) as one JSON object");
    add_daemon_options(opts, d);
    po::variables_map vm;
    if (parse_options(args, opts, vm)) return 0;
    if (vm.count("dot") && vm.count("json")) throw InputError("--dot and --json: one of them");

    const json a = checked(connect_daemon(d)->call({{"cmd", "map"}}), "map");
    const std::string text = str(a, "map");
    const Network net = parse_network(text, "the daemon's map");
    const std::size_t n = net.size();
    if (net.is_cost_matrix()) throw Error("the daemon's map is a cost matrix, not a measured map");
    const Matrix& lat = net.latency();
    const Matrix& bw = net.bandwidth();
    Subnets subnets = net.subnets().value_or(Subnets{});
    if (vm.count("json")) {
        json out = json_document("map show");
        out["map"] = map_json(net, measured_at(text));
        std::cout << dump_json(out) << '\n';
        return 0;
    }

    if (vm.count("dot")) {
        bool symmetric = true;
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j < n; ++j) symmetric = symmetric && lat[i][j] == lat[j][i];
        }
        std::cout << (symmetric ? "graph" : "digraph") << " hetcast {\n  node [shape=box];\n";
        for (std::size_t s = 0; s < subnets.size(); ++s) {
            std::cout << "  subgraph cluster_" << s << " {\n    label=\"subnet " << s << "\";\n";
            for (NodeId id : subnets[s]) std::cout << "    " << dot_id(net.name(id)) << ";\n";
            std::cout << "  }\n";
        }
        if (subnets.empty()) {
            for (std::size_t i = 0; i < n; ++i) std::cout << "  " << dot_id(net.name(static_cast<NodeId>(i))) << ";\n";
        }
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = symmetric ? i + 1 : 0; j < n; ++j) {
                if (i == j) continue;
                std::cout << "  " << dot_id(net.name(static_cast<NodeId>(i))) << (symmetric ? " -- " : " -> ")
                          << dot_id(net.name(static_cast<NodeId>(j))) << " [label=\"" << fixed(lat[i][j] * 1e3, 3)
                          << " ms\"];\n";
            }
        }
        std::cout << "}\n";
        return 0;
    }

    const std::string measured = measured_at(text);
    std::cout << n << " members" << (measured.empty() ? "" : ", measured at " + measured) << '\n';
    if (subnets.empty()) {
        std::cout << "no subnets in the map\n";
    } else {
        std::cout << subnets.size() << " subnet" << (subnets.size() == 1 ? "" : "s") << ":\n";
        print_subnets(std::cout, net);
    }
    print_nics(std::cout, net);
    std::vector<std::vector<std::string>> lat_cells(n, std::vector<std::string>(n, "-"));
    std::vector<std::vector<std::string>> bw_cells = lat_cells;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            if (i == j) continue;
            lat_cells[i][j] = fixed(lat[i][j] * 1e3, 3);
            bw_cells[i][j] = fixed(bw[i][j] / 1e6, bw[i][j] >= 1e8 ? 0 : 1);
        }
    }
    std::cout << "\nlatency (ms):\n";
    print_table(std::cout, net.names(), lat_cells);
    std::cout << "\nbandwidth (MB/s):\n";
    print_table(std::cout, net.names(), bw_cells);
    return 0;
}

}  // namespace hetcast::cli

namespace hetcast::cli {
namespace {

int revoke_operator(Client& client, const std::string& name, bool yes) {
    if (!yes) {
        std::cerr << "revoke the operator identity '" << name << "' on every member? [y/N] " << std::flush;
        std::string answer;
        std::getline(std::cin, answer);
        if (answer != "y" && answer != "Y" && answer != "yes") {
            std::cerr << "nothing changed\n";
            return 1;
        }
    }
    const json a = client.call({{"cmd", "leave"}, {"name", name}, {"operator", true}});
    if (!a.value("ok", false) && a.value("not_updated", json::array()).empty()) (void)checked(a, "leave --operator");
    std::cout << "the operator identity '" << name << "' is revoked\n";
    if (const auto missed = a.value("not_updated", json::array()); !missed.empty()) {
        std::cerr << "hetcast leave: not told: " << missed.dump() << " (they learn it with the next member list)\n";
        return exit_partial;
    }
    return 0;
}

}  // namespace

int cmd_leave(const std::vector<std::string>& args) {
    DaemonOptions d;
    std::string name;
    po::options_description opts(
        "hetcast leave: remove members from the cluster (member list and map, on every daemon) and\n"
        "revoke their identities: every daemon refuses their certificates from then on. To come back,\n"
        "a member needs a new identity ('hetcast keys issue NAME --force', at least a minute after the\n"
        "leave) and joins again ('hetcastd --join HOST:PORT' or seeds:); also take it out of the\n"
        "cluster file, or that file's next edit brings it back in the member list.\n"
        "Asks for confirmation on a terminal; scripts pass --yes.\n"
        "With --operator, NAME is an operator's identity: every member refuses it and the orders it\n"
        "signed from then on. Another operator's identity must ask (keys issue NAME --operator).\n\n"
        "  hetcast leave NODESET [--yes] [--config FILE] [--from NODE]   (a name, 'ws[05-07]', @group, ...)\n"
        "  hetcast leave --operator NAME [--yes] [--config FILE] [--from NODE]\n\noptions");
    opts.add_options()("help,h", "show this help")("yes,y", "do not ask for confirmation (scripts)")(
        "operator", "NAME is an operator identity to revoke, not a member");
    add_daemon_options(opts, d);
    po::variables_map vm;
    if (parse_options_with(args, opts, "name", name, vm)) return 0;
    if (name.empty()) throw InputError("which member? (hetcast leave NODESET)");
    const bool yes = vm.count("yes") != 0;
    if (!yes && ::isatty(STDIN_FILENO) == 0) {
        throw InputError("leave revokes identities: confirm with --yes when not on a terminal");
    }
    const auto client = connect_daemon(d);
    if (vm.count("operator")) return revoke_operator(*client, name, yes);
    // Every name is checked before any member leaves.
    const json a = checked(client->call({{"cmd", "status"}, {"hellos", false}}), "status");
    std::vector<std::string> members;
    for (const auto& m : a.value("members", json::array())) members.push_back(str(m, "name"));
    const auto leaving = select_nodes(d, *client, members, name, "");
    if (leaving.empty()) throw InputError("node set '" + name + "' names no member");
    const std::string self = str(a, "name");
    if (std::find(leaving.begin(), leaving.end(), self) != leaving.end()) {
        throw InputError("'" + self + "' coordinates this leave: ask another member (--from)");
    }
    if (!yes) {
        std::string names;
        for (const auto& n : leaving) names += (names.empty() ? "'" : ", '") + n + "'";
        std::cerr << "remove " << names << " from the cluster and revoke " << (leaving.size() == 1 ? "its identity" : "their identities")
                  << " (coming back takes a new one)? [y/N] " << std::flush;
        std::string answer;
        std::getline(std::cin, answer);
        if (answer != "y" && answer != "Y" && answer != "yes") {
            std::cerr << "nothing changed\n";
            return 1;
        }
    }
    for (const auto& n : leaving) {
        (void)checked(client->call({{"cmd", "leave"}, {"name", n}}), "leave");
        std::cout << "'" << n << "' left the cluster\n";
    }
    return 0;
}

}  // namespace hetcast::cli
