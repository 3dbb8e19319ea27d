// Cluster files (members and named groups) and the revocations a daemon keeps: read,
// checked, and written back.
#include "hetcast/runtime/config.hpp"

#include <yaml-cpp/yaml.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/nodeset.hpp"
#include "config_reader.hpp"

namespace hetcast {

namespace detail::config_file {

std::vector<net::Revocation> Reader::revoked(const YAML::Node& root) const {
    const Entries e = entries(root, "", {"revoked"});
    const YAML::Node& seq = sequence(required(e, root, "revoked", "").value, "revoked");
    std::vector<net::Revocation> out;
    for (std::size_t i = 0; i < seq.size(); ++i) {
        const std::string what = "revoked[" + std::to_string(i) + "]";
        const Entries f = entries(seq[i], what, {"name", "since", "order"});
        net::Revocation r;
        r.name = name(required(f, seq[i], "name", what).value, what + ".name");
        const YAML::Node& since = required(f, seq[i], "since", what).value;
        try {
            r.since = since.as<std::int64_t>();
        } catch (const YAML::Exception&) {
            fail(since.Mark(), what + ".since: expected seconds since the epoch");
        }
        if (const auto it = f.find("order"); it != f.end()) r.order = text(it->second.value, what + ".order");
        out.push_back(std::move(r));
    }
    return out;
}

ClusterFile Reader::cluster(const YAML::Node& root) const {
    const Entries e = entries(root, "", {"members", "groups"});
    const YAML::Node& seq = sequence(required(e, root, "members", "").value, "members");
    if (seq.size() == 0) fail(seq.Mark(), "members: a cluster needs at least one member");
    if (seq.size() > max_members) {
        fail(seq.Mark(), "members: more than " + std::to_string(max_members) + " members");
    }
    std::vector<Member> out;
    std::set<std::string> names;
    std::set<std::pair<std::string, std::uint16_t>> addresses;
    for (std::size_t i = 0; i < seq.size(); ++i) {
        const YAML::Node& m = seq[i];
        const std::string what = "members[" + std::to_string(i) + "]";
        const Entries f = entries(m, what, {"name", "host", "port"});
        Member member;
        const YAML::Node& name_node = required(f, m, "name", what).value;
        member.name = name(name_node, what + ".name");
        member.host = text(required(f, m, "host", what).value, what + ".host");
        if (has_space(member.host)) {
            fail(f.at("host").value.Mark(), what + ".host: white space is not allowed");
        }
        member.port = port(required(f, m, "port", what).value, what + ".port");
        if (!names.insert(member.name).second) {
            fail(name_node.Mark(), what + ": duplicate member name " + shown(member.name));
        }
        if (!addresses.emplace(member.host, member.port).second) {
            fail(m.Mark(), what + ": duplicate address " + shown(member.host + ":" +
                                                                 std::to_string(member.port)));
        }
        out.push_back(std::move(member));
    }
    ClusterFile file{std::move(out), {}};
    if (const auto it = e.find("groups"); it != e.end()) file.groups = groups(it->second.value);
    return file;
}

NodeGroups Reader::groups(const YAML::Node& map) const {
    if (!map.IsMap()) fail(map.Mark(), "groups: expected a mapping of names to node sets");
    NodeGroups out;
    std::vector<std::pair<std::string, YAML::Mark>> where;  // in the file's order
    for (auto it = map.begin(); it != map.end(); ++it) {
        const std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
        if (!valid_group_name(name)) {
            fail(it->first.Mark(), "groups: " + shown(name) +
                                       " is not a group name (letters, digits, '.', '_', '-', from a letter or digit)");
        }
        const std::string what = "groups." + name;
        if (out.count(name)) fail(it->first.Mark(), "groups: duplicate group " + shown(name));
        if (it->second.IsNull()) fail(it->first.Mark(), "groups: " + shown(name) + " has no value");
        out.emplace(name, text(it->second, what));
        where.emplace_back(name, it->second.Mark());
    }
    const GroupResolver resolve = named_groups(out, unresolved_map_groups());
    for (const auto& [name, mark] : where) {
        try {
            (void)resolve(name);
        } catch (const InputError& e) {
            std::string why = e.what();
            if (const std::string self = "group '@" + name + "': "; why.starts_with(self)) why.erase(0, self.size());
            fail(mark, "groups." + name + ": " + why);
        }
    }
    return out;
}

}  // namespace detail::config_file

using namespace detail::config_file;

ClusterFile parse_cluster_file(std::string_view yaml, std::string_view origin) {
    const Reader reader(origin);
    return parse_document(yaml, reader, "cluster file",
                          [&](const YAML::Node& root) { return reader.cluster(root); });
}

ClusterFile load_cluster_file(const fs::path& file) {
    return parse_cluster_file(read_text(file, max_text_bytes), file.string());
}

std::vector<Member> parse_cluster(std::string_view yaml, std::string_view origin) {
    return parse_cluster_file(yaml, origin).members;
}

std::vector<Member> load_cluster(const fs::path& file) {
    return parse_cluster(read_text(file, max_text_bytes), file.string());
}

std::vector<net::Revocation> parse_revoked(std::string_view yaml, std::string_view origin) {
    const Reader reader(origin);
    return parse_document(yaml, reader, "revocation list", [&](const YAML::Node& root) { return reader.revoked(root); });
}

std::vector<net::Revocation> load_revoked(const fs::path& file) {
    return parse_revoked(read_text(file, max_text_bytes), file.string());
}

void save_revoked(const fs::path& file, const std::vector<net::Revocation>& revoked) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "revoked" << YAML::Value << YAML::BeginSeq;
    for (const auto& r : revoked) {
        out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << r.name << YAML::Key
            << "since" << YAML::Value << r.since;
        if (!r.order.empty()) out << YAML::Key << "order" << YAML::Value << YAML::DoubleQuoted << r.order;
        out << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
    if (!out.good()) throw Error("cannot write " + file.string() + ": " + out.GetLastError());
    std::string text = std::string(out.c_str()) + "\n";
    (void)parse_revoked(text, file.string());
    write_file_atomically(file, text);
}

void save_cluster(const fs::path& file, const std::vector<Member>& members) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "members" << YAML::Value << YAML::BeginSeq;
    for (const Member& m : members) {
        out << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << m.name;
        out << YAML::Key << "host" << YAML::Value << YAML::DoubleQuoted << m.host;
        out << YAML::Key << "port" << YAML::Value << static_cast<unsigned>(m.port);
        out << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
    if (!out.good()) throw Error("cannot write " + file.string() + ": " + out.GetLastError());
    std::string text = out.c_str();
    text += '\n';
    // Refuse to write what load_cluster would refuse to read.
    (void)parse_cluster(text, file.string());
    write_file_atomically(file, text);
}

}  // namespace hetcast
