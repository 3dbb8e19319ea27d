// Node set groups: the map's (@subnet:N, @*), the cluster file's (named_groups), and the
// members a node set selects.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <unordered_set>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/nodeset.hpp"
#include "nodeset_text.hpp"

namespace hetcast {
namespace {

using detail::quoted;
using NameSet = std::unordered_set<std::string>;

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

GroupResolver map_groups(const Network& net) {
    return [&net](const std::string& name) -> std::vector<std::string> {
        if (name == "*") return net.names();
        const std::size_t count = net.subnets() ? net.subnets()->size() : 0;
        const std::string known = count == 0   ? "the map has no subnets: its only group is @*"
                                  : count == 1 ? "the map's groups: @subnet:0, @*"
                                               : "the map's groups: @subnet:0 to @subnet:" + std::to_string(count - 1) + ", @*";
        constexpr std::string_view subnet = "subnet:";
        if (name.starts_with(subnet)) {
            const std::string n = name.substr(subnet.size());
            if (count == 0) throw InputError("no group '@" + name + "': the map has no subnets");
            if (!all_digits(n) || n.size() > 9 || std::stoull(n) >= count) {
                throw InputError("no group '@" + name + "' (" + known + ")");
            }
            std::vector<std::string> out;
            for (const NodeId v : (*net.subnets())[std::stoull(n)]) out.push_back(net.name(v));
            return out;
        }
        throw InputError("no group '@" + name + "' (" + known + ")");
    };
}

bool valid_group_name(std::string_view name) {
    const auto ok = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
    return !name.empty() && ok(name[0]) &&
           std::all_of(name.begin(), name.end(), [&](char c) { return ok(c) || c == '.' || c == '_' || c == '-'; });
}

namespace {

/// named_groups' resolver: copies share one state, so a group's expansion (which calls
/// the resolver again for the groups it names) sees the chain being expanded.
struct NamedGroups {
    struct State {
        NodeGroups groups;
        GroupResolver then;
        std::map<std::string, std::vector<std::string>> done;
        std::vector<std::string> open;  // the groups being expanded, outermost first
        std::string why;                // the innermost failure: told once, not per level
        std::size_t kept = 0;           // names held in `done`
    };
    /// Bounds for groups a request carries: the recursion's depth, the names remembered.
    static constexpr std::size_t max_depth = 64, max_kept = 4 * nodeset_max_names;
    std::shared_ptr<State> s;

    std::vector<std::string> operator()(const std::string& name) const {
        const bool outermost = s->open.empty();
        try {
            return resolve(name);
        } catch (const InputError& e) {
            std::string why = s->why.empty() ? e.what() : s->why;
            if (outermost) s->why.clear();
            throw InputError(why);
        }
    }

    std::vector<std::string> resolve(const std::string& name) const {
        const auto it = s->groups.find(name);
        if (it == s->groups.end()) return other(name);
        if (const auto d = s->done.find(name); d != s->done.end()) return d->second;
        if (const auto o = std::find(s->open.begin(), s->open.end(), name); o != s->open.end()) {
            std::string chain;
            for (auto i = o; i != s->open.end(); ++i) chain += "@" + *i + " -> ";
            s->why = "group '@" + name + "' refers to itself (" + chain + "@" + name + ")";
            throw InputError(s->why);
        }
        if (s->open.size() >= max_depth) {
            s->why = "groups nested more than " + std::to_string(max_depth) + " deep (at '@" + name + "')";
            throw InputError(s->why);
        }
        s->open.push_back(name);
        struct Pop {
            std::vector<std::string>& open;
            ~Pop() { open.pop_back(); }
        } pop{s->open};
        std::vector<std::string> names;
        try {
            names = expand_nodeset(it->second, *this);
        } catch (const InputError& e) {
            if (s->why.empty()) s->why = "group '@" + name + "': " + e.what();
            throw;
        }
        if ((s->kept += names.size()) > max_kept) {
            s->why = "the groups name more than " + std::to_string(max_kept) + " names in all";
            throw InputError(s->why);
        }
        return s->done.emplace(name, std::move(names)).first->second;
    }

    std::vector<std::string> other(const std::string& name) const {
        std::string known;
        for (const auto& [n, text] : s->groups) known += (known.empty() ? "@" : ", @") + n;
        if (!s->then) {
            const std::string what = "no group '@" + name + "' (" +
                                     (known.empty() ? std::string("no groups are defined") : "the groups: " + known) + ")";
            if (!s->open.empty()) s->why = what;
            throw InputError(what);
        }
        try {
            return s->then(name);
        } catch (const InputError& e) {
            std::string what = e.what();
            if (!known.empty()) {
                known = "the cluster file's groups: " + known;
                if (!what.empty() && what.back() == ')') {
                    what.insert(what.size() - 1, "; " + known);
                } else {
                    what += " (" + known + ")";
                }
            }
            if (!s->open.empty()) s->why = what;
            throw InputError(what);
        }
    }
};

}  // namespace

GroupResolver named_groups(NodeGroups groups, GroupResolver then) {
    return NamedGroups{std::make_shared<NamedGroups::State>(NamedGroups::State{std::move(groups), std::move(then), {}, {}, {}, 0})};
}

GroupResolver unresolved_map_groups() {
    return [](const std::string& name) -> std::vector<std::string> {
        if (name == "*" || name.starts_with("subnet:")) return {};
        throw InputError("no group '@" + name + "' (the map's groups: @subnet:N, @*)");
    };
}

namespace {

/// `groups`, less the names that are not members (`known`), each group said once to `warn`.
GroupResolver members_of_groups(GroupResolver groups, std::function<bool(const std::string&)> known,
                                const GroupWarning& warn) {
    auto told = std::make_shared<std::set<std::string>>();
    return [groups = std::move(groups), known = std::move(known), &warn, told](const std::string& group) {
        std::vector<std::string> names = groups(group);
        std::vector<std::string> gone;
        std::erase_if(names, [&](const std::string& n) { return !known(n) && (gone.push_back(n), true); });
        if (!gone.empty() && told->insert(group).second && warn) {
            warn("group '@" + group + "' names " + fold_nodeset(gone) + (gone.size() == 1 ? ", not a member" : ", not members") +
                 ": left out (the group's other members still count; edit the cluster file)");
        }
        return names;
    };
}

}  // namespace

std::vector<std::string> select_names(const std::vector<std::string>& members, std::string_view to,
                                      std::string_view exclude, const GroupResolver& groups, const GroupWarning& warn) {
    const NameSet known(members.begin(), members.end());
    const GroupResolver member_groups = members_of_groups(
        [&](const std::string& name) { return groups ? groups(name) : throw InputError("no group '@" + name + "'"); },
        [&known](const std::string& n) { return known.contains(n); }, warn);
    const GroupResolver with_all = [&](const std::string& name) {
        return name == "*" ? members : member_groups(name);
    };
    const auto members_only = [&](std::string_view text) {
        const auto names = expand_nodeset(text, with_all);
        std::vector<std::string> unknown;
        for (const auto& n : names) {
            if (!known.contains(n)) unknown.push_back(n);
        }
        if (!unknown.empty()) {
            throw InputError("node set " + quoted(text) + ": " + fold_nodeset(unknown) +
                             (unknown.size() == 1 ? " is not a member" : " are not members") + " (the members: " +
                             fold_nodeset(members) + ")");
        }
        return NameSet(names.begin(), names.end());
    };
    NameSet chosen = members_only(to);
    if (!exclude.empty()) {
        for (const auto& n : members_only(exclude)) chosen.erase(n);
    }
    std::vector<std::string> out;
    for (const auto& m : members) {
        if (chosen.contains(m)) out.push_back(m);
    }
    return out;
}

std::vector<NodeId> select_members(const Network& net, std::string_view to, std::string_view exclude,
                                   const NodeGroups& named, const GroupWarning& warn) {
    const GroupResolver groups = members_of_groups(named.empty() ? map_groups(net) : named_groups(named, map_groups(net)),
                                                   [&net](const std::string& n) { return net.find(n).has_value(); }, warn);
    const auto members_only = [&net](std::string_view text, const std::vector<std::string>& names) {
        std::vector<std::string> unknown;
        for (const auto& n : names) {
            if (!net.find(n)) unknown.push_back(n);
        }
        if (unknown.empty()) return;
        std::string msg = "node set " + quoted(text) + ": " + fold_nodeset(unknown) +
                          (unknown.size() == 1 ? " is not a member" : " are not members") + " of the map";
        if (const std::string all = fold_nodeset(net.names()); all.size() <= 100) msg += " (its members: " + all + ")";
        throw InputError(msg);
    };
    const auto wanted = expand_nodeset(to, groups);
    members_only(to, wanted);
    NameSet chosen(wanted.begin(), wanted.end());
    if (!exclude.empty()) {
        const auto left_out = expand_nodeset(exclude, groups);
        members_only(exclude, left_out);
        for (const auto& n : left_out) chosen.erase(n);
    }
    std::vector<NodeId> out;
    for (NodeId v = 0; v < net.size(); ++v) {
        if (chosen.contains(net.name(v))) out.push_back(v);
    }
    return out;
}

}  // namespace hetcast
