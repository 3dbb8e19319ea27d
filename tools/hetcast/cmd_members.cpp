// `hetcast join`: the operator's order that makes a new daemon a member.
#include <iostream>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "daemon_link.hpp"
#include "hetcast/error.hpp"
#include "hetcast/net/identity.hpp"

namespace po = boost::program_options;
using json = nlohmann::json;

namespace hetcast::cli {

int cmd_join(const std::vector<std::string>& args) {
    DaemonOptions d;
    std::string name, at;
    po::options_description opts(
        "hetcast join: make a running daemon a member. A daemon refuses identities the cluster does\n"
        "not know (neither a member nor an operator), so a new one joins by the operator's order:\n"
        "start it (its identity from 'hetcast keys issue NAME'), then name it and its address here.\n"
        "The member asked (--from) adds it to every member list, measures it against every member\n"
        "and gives everyone the new map. A member already listed may also join again on its own\n"
        "('hetcastd --join HOST:PORT' or seeds:), say from a new address.\n\n"
        "  hetcast join NAME HOST:PORT [--config FILE] [--from NODE]\n\noptions");
    opts.add_options()("help,h", "show this help");
    add_daemon_options(opts, d);
    po::options_description all;
    all.add(opts).add_options()("name", po::value(&name))("at", po::value(&at));
    po::positional_options_description pos;
    pos.add("name", 1).add("at", 1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    if (vm.count("help")) {
        std::cout << opts;
        return 0;
    }
    po::notify(vm);
    if (name.empty() || at.empty()) throw InputError("which daemon, where? (hetcast join NAME HOST:PORT)");
    net::check_identity_name(name);
    const auto colon = at.rfind(':');
    std::uint16_t port = 0;
    try {
        if (colon == std::string::npos || colon == 0) throw InputError("");
        std::size_t used = 0;
        const unsigned long p = std::stoul(at.substr(colon + 1), &used);
        if (used != at.size() - colon - 1 || p == 0 || p > 65535) throw InputError("");
        port = static_cast<std::uint16_t>(p);
    } catch (const std::exception&) {
        throw InputError("'" + at + "' is not HOST:PORT");
    }
    const auto client = connect_daemon(d);
    const json a = checked(client->call({{"cmd", "join"}, {"name", name}, {"host", at.substr(0, colon)}, {"port", port}}),
                           "join");
    std::cout << "'" << name << "' joined the cluster (" << a.value("members", json::array()).size() << " members)\n";
    const auto missed = a.value("not_updated", json::array());
    if (!missed.empty()) {
        std::cerr << "not told: " << missed.dump() << " (they learn it with the next member list)\n";
        return exit_partial;
    }
    return 0;
}

}  // namespace hetcast::cli
