#include <algorithm>
#include <cstddef>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options/errors.hpp>

#include "build_version.hpp"
#include "commands.hpp"
#include "hetcast/error.hpp"
#include "hetcast/runtime/client.hpp"

namespace {

// The command names are followed by two spaces at least: man/hetcast-help and
// completion/hetcast.bash read them from here.
constexpr const char* usage =
    "usage: hetcast <command> [options]\n"
    "       hetcast --help | --version\n"
    "\n"
    "commands:\n"
    "  plan      plan a broadcast or multicast on a network file and print the schedule\n"
    "  map       partition a network file into subnets (ECO)\n"
    "  sweep     simulate random networks like the papers' figures: means, bounds, hit rates, plots\n"
    "  push      push files to the cluster along a planned schedule; report achieved vs predicted\n"
    "  probe     measure every pair of daemons, compute the subnet map (ECO), store it on every daemon\n"
    "  status    list the members, whether each is up, its version, and the map's age\n"
    "  join      add a running daemon to the cluster (the operator's order; it is measured)\n"
    "  leave     remove a member from the cluster (every daemon's member list and map)\n"
    "  jobs      list the jobs running on every member\n"
    "  cancel    stop a job everywhere (Ctrl-C on push does it too; a second Ctrl-C detaches)\n"
    "  wait      wait for a push to end and print its report (re-attach; or a finished one's)\n"
    "  map show  print the daemons' current map (subnets and matrices, or --dot)\n"
    "  keys      make the cluster's CA and issue member and operator identities (TLS)\n"
    "\n"
    "'hetcast <command> --help' shows the options of a command.\n";

constexpr std::string_view commands[] = {"plan", "map",  "sweep", "push",   "probe",
                                         "status", "join", "leave", "jobs", "cancel", "wait", "keys"};

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
/// neighbours cost 1 ("psuh" is 1 from "push").
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

/// One line for a word that is no command: the nearest commands (a unique prefix, else at
/// most two edits away, closer than the word is long) as a hint, else where the list is.
std::string unknown_command(const std::string& word) {
    std::vector<std::string_view> near;
    for (auto c : commands) {
        if (word.size() >= 2 && c.starts_with(word)) near.push_back(c);
    }
    if (near.size() != 1) {
        near.clear();
        std::size_t best = 3;
        for (auto c : commands) {
            const std::size_t d = edit_distance(word, c);
            if (d >= word.size() || d > best) continue;
            if (d < best) near.clear();
            best = d;
            near.push_back(c);
        }
    }
    const bool option = word.starts_with("-");
    std::string line = "hetcast: unknown " + std::string(option ? "option" : "command") + " '" + word + "'";
    if (near.empty() || option) return line + " (see 'hetcast --help')";
    line += " (did you mean ";
    for (std::size_t i = 0; i < near.size(); ++i) line += (i ? " or '" : "'") + std::string(near[i]) + "'";
    return line + "?)";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
        std::cout << usage;
        return argc < 2 ? 2 : 0;
    }
    if (std::string(argv[1]) == "--version") {
        std::cout << "hetcast " << hetcast::build::version_line() << '\n';
        return 0;
    }
    const std::string cmd = argv[1];
    const std::vector<std::string> args(argv + 2, argv + argc);
    try {
        if (cmd == "plan") return hetcast::cli::cmd_plan(args);
        if (cmd == "map") return hetcast::cli::cmd_map(args);
        if (cmd == "sweep") return hetcast::cli::cmd_sweep(args);
        if (cmd == "push") return hetcast::cli::cmd_push(args);
        if (cmd == "probe") return hetcast::cli::cmd_probe(args);
        if (cmd == "status") return hetcast::cli::cmd_status(args);
        if (cmd == "join") return hetcast::cli::cmd_join(args);
        if (cmd == "leave") return hetcast::cli::cmd_leave(args);
        if (cmd == "jobs") return hetcast::cli::cmd_jobs(args);
        if (cmd == "cancel") return hetcast::cli::cmd_cancel(args);
        if (cmd == "wait") return hetcast::cli::cmd_wait(args);
        if (cmd == "keys") return hetcast::cli::cmd_keys(args);
        std::cerr << unknown_command(cmd) << '\n';
        return 2;
    } catch (const hetcast::InputError& e) {
        std::cerr << "hetcast " << cmd << ": " << e.what() << '\n';
        return 2;
    } catch (const boost::program_options::error& e) {
        std::cerr << "hetcast " << cmd << ": " << e.what() << " (see 'hetcast " << cmd << " --help')\n";
        return 2;
    } catch (const hetcast::Unreachable& e) {
        std::cerr << "hetcast " << cmd << ": " << e.what() << '\n';
        return hetcast::cli::exit_unreachable;
    } catch (const hetcast::Error& e) {
        std::cerr << "hetcast " << cmd << ": " << e.what() << '\n';
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "hetcast " << cmd << ": internal error: " << e.what() << '\n';
        return 1;
    }
}
