#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options/errors.hpp>

#include "build_version.hpp"
#include "commands.hpp"
#include "hetcast/error.hpp"

namespace {

constexpr const char* usage =
    "usage: hetcast <command> [options]\n"
    "       hetcast --help | --version\n"
    "\n"
    "commands:\n"
    "  plan   plan a broadcast or multicast on a network file and print the schedule\n"
    "  map    partition a network file into subnets (ECO)\n"
    "  sweep  simulate random networks like the papers' figures: means, bounds, hit rates, plots\n"
    "  push   push files to the cluster along a planned schedule; report achieved vs predicted\n"
    "  probe  measure every pair of daemons, compute the subnet map (ECO), store it on every daemon\n"
    "  status list the members, whether each is up, its version, and the map's age\n"
    "  leave  remove a member from the cluster (every daemon's member list and map)\n"
    "  jobs   list the jobs running on every member\n"
    "  cancel stop a job everywhere (Ctrl-C on push does it too; a second Ctrl-C detaches)\n"
    "  map show  print the daemons' current map (subnets and matrices, or --dot)\n"
    "  keys   make the cluster's CA and issue member and operator identities (TLS)\n"
    "\n"
    "'hetcast <command> --help' shows the options of a command.\n";

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
        if (cmd == "leave") return hetcast::cli::cmd_leave(args);
        if (cmd == "jobs") return hetcast::cli::cmd_jobs(args);
        if (cmd == "cancel") return hetcast::cli::cmd_cancel(args);
        if (cmd == "keys") return hetcast::cli::cmd_keys(args);
        std::cerr << "hetcast: unknown command '" << cmd << "'\n" << usage;
        return 2;
    } catch (const hetcast::InputError& e) {
        std::cerr << "hetcast " << cmd << ": " << e.what() << '\n';
        return 2;
    } catch (const boost::program_options::error& e) {
        std::cerr << "hetcast " << cmd << ": " << e.what() << " (see 'hetcast " << cmd << " --help')\n";
        return 2;
    } catch (const hetcast::Error& e) {
        std::cerr << "hetcast " << cmd << ": " << e.what() << '\n';
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "hetcast " << cmd << ": internal error: " << e.what() << '\n';
        return 1;
    }
}
