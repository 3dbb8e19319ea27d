// `hetcast keys`: the cluster's CA and the identities it issues (lib/net/identity.hpp).

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <system_error>

#include <boost/program_options.hpp>

#include "commands.hpp"
#include "daemon_link.hpp"
#include "hetcast/error.hpp"
#include "hetcast/net/identity.hpp"
#include "hetcast/runtime/config.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace hetcast::cli {
namespace {

constexpr const char* keys_usage =
    "usage: hetcast keys <init|issue|show> [options]\n"
    "\n"
    "  init  [--dir DIR] [--cluster NAME] [--operator NAME]\n"
    "        make the cluster's CA (DIR/ca.pem) and the operator's identity (DIR/operator.pem)\n"
    "  issue NAME [--dir DIR] [--operator] [--days N] [--also-trust CA.pem] [-o FILE] [--force]\n"
    "        issue an identity for member NAME (or an operator) signed by DIR/ca.pem: DIR/NAME.pem,\n"
    "        valid for 825 days (--days); --also-trust adds another CA it trusts (a CA rotation)\n"
    "  show  FILE\n"
    "        print who an identity file names, its role, when it was issued and when it expires\n"
    "\n"
    "DIR defaults to $HETCAST_KEYS, else $XDG_CONFIG_HOME/hetcast (~/.config/hetcast). Every file is written 0600 and\n"
    "never over an existing one unless --force. ca.pem stays with the operator; a member gets\n"
    "only its own NAME.pem (see docs/security.md).\n";

std::string default_dir() {
    if (const char* env = std::getenv("HETCAST_KEYS"); env && *env) return env;
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return std::string(xdg) + "/hetcast";
    if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.config/hetcast";
    throw InputError("no key folder: give --dir or set HETCAST_KEYS");
}

/// An identity or CA file: mode 0600, whole or not at all, never over an existing one
/// unless `overwrite`.
void write_private(const fs::path& file, const std::string& text, bool overwrite) {
    std::error_code ec;
    fs::create_directories(file.parent_path().empty() ? fs::path(".") : file.parent_path(), ec);
    if (ec) throw InputError("cannot make " + file.parent_path().string() + ": " + ec.message());
    if (!overwrite && fs::exists(fs::symlink_status(file))) {
        throw InputError(file.string() + " exists; not replaced (--force replaces it)");
    }
    try {
        write_file_atomically(file, text, 0600, overwrite);
    } catch (const Error& e) {
        throw InputError(e.what());
    }
}

std::string read_file(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw InputError("cannot read " + file.string());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

net::ClusterCa load_ca(const fs::path& dir) {
    const fs::path file = dir / "ca.pem";
    if (!fs::exists(file)) throw InputError("no CA at " + file.string() + " ('hetcast keys init' makes one)");
    return net::ClusterCa::parse(read_file(file), file.string());
}

int keys_init(const std::vector<std::string>& args) {
    std::string dir, cluster, op = "operator";
    po::options_description opts("hetcast keys init");
    opts.add_options()("help,h", "this help")("dir", po::value(&dir), "where to put ca.pem and operator.pem")(
        "cluster", po::value(&cluster), "the CA's name (default: hetcast- and 8 random hex digits)")(
        "operator", po::value(&op)->default_value(op), "the operator identity's name");
    po::variables_map vm;
    if (parse_options(args, opts, vm)) return 0;
    const fs::path d = dir.empty() ? default_dir() : dir;
    if (fs::exists(d / "ca.pem")) throw InputError((d / "ca.pem").string() + " exists: this folder has a CA already");
    if (cluster.empty()) {
        std::random_device rd;
        char hex[9];
        std::snprintf(hex, sizeof hex, "%08x", rd());
        cluster = std::string("hetcast-") + hex;
    }
    const auto ca = net::ClusterCa::create(cluster);
    const auto id = ca.issue(op, net::Role::operator_);
    write_private(d / "ca.pem", ca.pem(), false);
    write_private(d / "operator.pem", net::identity_pem(id), false);
    std::cout << "made the cluster CA " << (d / "ca.pem").string() << " (keep it with the operator)\n"
              << "and the operator's identity " << (d / "operator.pem").string() << "\n"
              << "next: 'hetcast keys issue NODE' for each member, and copy NODE.pem to it\n";
    return 0;
}

int keys_issue(const std::vector<std::string>& args) {
    std::string dir, name, out;
    int days = net::ClusterCa::default_days;
    std::vector<std::string> also;
    po::options_description opts("hetcast keys issue NAME");
    opts.add_options()("help,h", "this help")("dir", po::value(&dir), "where ca.pem is")(
        "operator", "an operator's identity instead of a member's")("output,o", po::value(&out),
                                                                     "the file to write (default: DIR/NAME.pem)")(
        "days", po::value(&days)->default_value(days), "how long it is valid, from a minute ago")(
        "also-trust", po::value(&also)->composing(),
        "also trust the CA of this file (the other CA's ca.pem, or an identity it issued), during a CA rotation; repeatable")(
        "force", "replace an existing file");
    po::variables_map vm;
    if (parse_options_with(args, opts, "name", name, vm)) return 0;
    if (name.empty()) throw InputError("issue: which member? (hetcast keys issue NAME)");
    const fs::path d = dir.empty() ? default_dir() : dir;
    const auto ca = load_ca(d);
    const auto role = vm.count("operator") ? net::Role::operator_ : net::Role::member;
    if (days < 1 || days > 36500) throw InputError("--days: 1 to 36500, not " + std::to_string(days));
    auto id = ca.issue(name, role, days);
    for (const auto& f : also) id.ca_pem += net::ca_certificates(read_file(f), f);
    const fs::path file = out.empty() ? d / (name + ".pem") : fs::path(out);
    const std::string text = net::identity_pem(id);
    (void)net::parse_identity(text, file.string());  // at most max_trusted_cas, each a CA
    write_private(file, text, vm.count("force") != 0);
    std::cout << "issued " << net::to_string(role) << " '" << name << "': " << file.string() << " (valid for " << days
              << " days" << (also.empty() ? "" : ", trusting " + std::to_string(also.size() + 1) + " CAs") << ")\n";
    return 0;
}

int keys_show(const std::vector<std::string>& args) {
    std::string file;
    po::options_description opts("hetcast keys show FILE");
    opts.add_options()("help,h", "this help");
    po::variables_map vm;
    if (parse_options_with(args, opts, "file", file, vm)) return 0;
    if (file.empty()) throw InputError("show: which file?");
    const net::Identity id = read_identity(file);
    const net::PeerIdentity p = net::describe(id);
    const auto utc = [](std::time_t t) {
        char when[32];
        std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
        return std::string(when);
    };
    const std::time_t now = std::time(nullptr);
    std::cout << "name    " << p.name << "\nrole    " << net::to_string(p.role) << "\nissued  " << utc(p.issued)
              << "\nexpires " << utc(p.expires)
              << (p.expires <= now ? " (expired)" : " (in " + std::to_string((p.expires - now) / 86400) + " days)")
              << "\nserial  " << p.serial << "\n";
    return 0;
}

}  // namespace

int cmd_keys(const std::vector<std::string>& args) {
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        std::cout << keys_usage;
        return args.empty() ? 2 : 0;
    }
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "init") return keys_init(rest);
    if (args[0] == "issue") return keys_issue(rest);
    if (args[0] == "show") return keys_show(rest);
    throw InputError("keys: unknown subcommand '" + args[0] + "' (init, issue or show)");
}

}  // namespace hetcast::cli
