// Node sets: ClusterShell's documented examples, errors, groups, the map's members, and
// properties over random inputs (fold then expand gives the set back; operators agree
// with std::set operations read left to right).
#include <doctest/doctest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/nodeset.hpp"

using namespace hetcast;

namespace {

using Names = std::vector<std::string>;

/// "n" + each value, unpadded or padded to `width`.
Names seq(const std::string& prefix, std::vector<int> values, int width = 0) {
    Names out;
    for (int v : values) {
        std::string s = std::to_string(v);
        if (static_cast<int>(s.size()) < width) s.insert(0, static_cast<std::size_t>(width) - s.size(), '0');
        out.push_back(prefix + s);
    }
    return out;
}

std::vector<int> range(int lo, int hi, int step = 1) {
    std::vector<int> v;
    for (int i = lo; i <= hi; i += step) v.push_back(i);
    return v;
}

std::vector<int> join(std::vector<int> a, const std::vector<int>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

Names join_names(Names a, const Names& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

/// The error expand_nodeset gives, "" when it gives none.
std::string error_of(const std::string& text, const GroupResolver& groups = {}) {
    try {
        (void)expand_nodeset(text, groups);
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

std::string error_of_select(const Network& net, const std::string& to, const std::string& exclude = {}) {
    try {
        (void)select_members(net, to, exclude);
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

bool sorted_unique(const Names& v) {
    for (std::size_t i = 1; i < v.size(); ++i) {
        if (!nodeset_less(v[i - 1], v[i]) || nodeset_less(v[i], v[i - 1])) return false;
    }
    return true;
}

Names sorted(Names v) {
    nodeset_sort(v);
    return v;
}

}  // namespace

TEST_CASE("nodeset: ClusterShell's documented examples expand as documented") {
    CHECK(expand_nodeset("node[1-5]") == seq("node", range(1, 5)));
    CHECK(expand_nodeset("node[01-10]") == seq("node", range(1, 10), 2));
    CHECK(expand_nodeset("node[1-3,7]") == seq("node", {1, 2, 3, 7}));
    CHECK(expand_nodeset("node[1-10/2]") == seq("node", {1, 3, 5, 7, 9}));
    CHECK(expand_nodeset("cluster3") == Names{"cluster3"});
    CHECK(expand_nodeset("cluster[5,10-42]") == seq("cluster", join({5}, range(10, 42))));
    CHECK(expand_nodeset("cluster[0-10/2]") == seq("cluster", {0, 2, 4, 6, 8, 10}));
    CHECK(expand_nodeset("cluster[0-10/2],othername[7-9,120-300]") ==
          join_names(seq("cluster", {0, 2, 4, 6, 8, 10}), seq("othername", join(range(7, 9), range(120, 300)))));
    CHECK(expand_nodeset("da[2-3]c[1-2]p[1-2]") == Names{"da2c1p1", "da2c1p2", "da2c2p1", "da2c2p2",
                                                          "da3c1p1", "da3c1p2", "da3c2p1", "da3c2p2"});
    // The extended pattern's operators.
    CHECK(expand_nodeset("node[0-10],node[14-16]") == seq("node", join(range(0, 10), range(14, 16))));
    CHECK(expand_nodeset("node[0-10]!node[8-10]") == seq("node", range(0, 7)));
    CHECK(expand_nodeset("node[0-10]&node[5-13]") == seq("node", range(5, 10)));
    CHECK(expand_nodeset("node[0-10]^node[5-13]") == seq("node", join(range(0, 4), range(11, 13))));
    CHECK(expand_nodeset("node[1-10]!node[5-6]") == seq("node", join(range(1, 4), range(7, 10))));
    CHECK(expand_nodeset("node[1-10]&node[5-15]") == seq("node", range(5, 10)));
    CHECK(expand_nodeset("node[1-10]^node[5-15]") == seq("node", join(range(1, 4), range(11, 15))));
    // The issue's own: ws[01-40,45].
    CHECK(expand_nodeset("ws[01-40,45]") == seq("ws", join(range(1, 40), {45}), 2));
}

TEST_CASE("nodeset: folding gives ClusterShell's documented forms") {
    CHECK(fold_nodeset({"ws01", "ws02", "ws03", "ws05"}) == "ws[01-03,05]");
    CHECK(fold_nodeset({"node1", "node2", "node3"}) == "node[1-3]");
    CHECK(fold_nodeset({"node01", "node02", "node03"}) == "node[01-03]");
    CHECK(fold_nodeset(expand_nodeset("blue[1-50]!blue[36-40]")) == "blue[1-35,41-50]");
    CHECK(fold_nodeset(expand_nodeset("da[2-3]c[1-2]p[1-2]")) == "da[2-3]c[1-2]p[1-2]");
    CHECK(fold_nodeset(expand_nodeset("node[1-5],node[8-10]")) == "node[1-5,8-10]");
    CHECK(fold_nodeset(expand_nodeset("cluster[0-10/2],othername[7-9,120-300]")) ==
          "cluster[0,2,4,6,8,10],othername[7-9,120-300]");
    CHECK(fold_nodeset({"node3"}) == "node3");
    CHECK(fold_nodeset({"b", "a", "a"}) == "a,b");
    CHECK(fold_nodeset({}).empty());
    // Not a full product: the rows that are stay folded.
    CHECK(fold_nodeset({"a1b1", "a1b2", "a2b1"}) == "a1b[1-2],a2b1");
    // Padded and unpadded numbers of one width share a range; others stay apart.
    CHECK(fold_nodeset({"n08", "n09", "n10", "n11"}) == "n[08-11]");
    CHECK(fold_nodeset({"n9", "n10", "n08"}) == "n[08,9,10]");
    CHECK(fold_nodeset({"n01", "n1"}) == "n[1,01]");
    // Names that cannot be written in a node set are printed as they are.
    CHECK(fold_nodeset({"n1", "a,b"}) == "a,b,n1");
}

TEST_CASE("nodeset: ClusterShell's order (numbers as numbers), each name once") {
    CHECK(expand_nodeset("n[10,9,1]") == Names{"n1", "n9", "n10"});
    CHECK(expand_nodeset("b1,a10,a2") == Names{"a2", "a10", "b1"});
    CHECK(expand_nodeset("n1,n01,n001") == Names{"n001", "n01", "n1"});
    CHECK(expand_nodeset("a2b1,a1b9") == Names{"a1b9", "a2b1"});
    CHECK(expand_nodeset("n1,n1,n[1-2],n[2]") == Names{"n1", "n2"});
    CHECK(nodeset_less("n9", "n10"));
    CHECK_FALSE(nodeset_less("n10", "n9"));
    CHECK_FALSE(nodeset_less("n9", "n9"));
}

TEST_CASE("nodeset: operators are read left to right, whitespace around elements is ignored") {
    // (1-5 \ 2-3) ∪ 3, not 1-5 \ (2-3 ∪ 3).
    CHECK(expand_nodeset("n[1-5]!n[2-3],n3") == seq("n", {1, 3, 4, 5}));
    CHECK(expand_nodeset("n[1-5],n[7-9]&n[3-8]") == seq("n", {3, 4, 5, 7, 8}));
    CHECK(expand_nodeset("n[1-3]^n[2-4]^n[3-5]") == seq("n", {1, 3, 5}));
    CHECK(expand_nodeset(" a , b ,\tc ") == Names{"a", "b", "c"});
    CHECK(expand_nodeset("n1!n1").empty());
    // A range's padding is its first bound's width; a longer last bound is fine.
    CHECK(expand_nodeset("n[08-11]") == Names{"n08", "n09", "n10", "n11"});
    CHECK(expand_nodeset("n[98-100]") == Names{"n98", "n99", "n100"});
    CHECK(expand_nodeset("n[098-100]") == Names{"n098", "n099", "n100"});
    CHECK(expand_nodeset("[1-3]") == Names{"1", "2", "3"});
    CHECK(expand_nodeset("node1-5") == Names{"node1-5"});
    CHECK(expand_nodeset("r[1-2]-n[1-2].lab") == Names{"r1-n1.lab", "r1-n2.lab", "r2-n1.lab", "r2-n2.lab"});
    CHECK(expand_nodeset("n[1-100000]").size() == nodeset_max_names);
}

TEST_CASE("nodeset: bad syntax is one line naming the text and what is wrong") {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"n[1-3", "a '[' without its ']'"},
        {"n1-3]", "a ']' without its '['"},
        {"n[1[2]]", "a '[' inside brackets"},
        {"n[5-1]", "a reversed range '5-1'"},
        {"", "an empty node set"},
        {"   ", "an empty node set"},
        {"a,,b", "nothing after ','"},
        {",a", "nothing before ','"},
        {"a!", "nothing after '!'"},
        {"a&", "nothing after '&'"},
        {"^a", "nothing before '^'"},
        {"n[]", "an empty range in 'n[]'"},
        {"n[1,]", "an empty range"},
        {"n[a-b]", "'a' in 'n[a-b]' is not a number"},
        {"n[1-]", "'' in 'n[1-]' is not a number"},
        {"n[1-10/0]", "a step of 0"},
        {"n[1-10/x]", "is not a number"},
        {"n[5/2]", "a step without a range: '5/2'"},
        {"n[1-05]", "padding mismatch in '1-05'"},
        {"n[001-05]", "padding mismatch"},
        {"n[12345678901234567890]", "a number over 18 digits"},
        {"n[1-100001]", "'n[1-100001]' expands past 100000 names"},
        {"n[1-1000000000000]", "expands past 100000 names"},
        {"a[1-1000]b[1-1000]", "'a[1-1000]b[1-1000]' expands past 100000 names"},
        {"n[1-60000],m[1-60000]", "more than 100000 names"},
        {"n[1-2][3-4]", "two bracket groups side by side"},
        {"a b", "whitespace inside the name 'a b'"},
        {"a@b", "'@' inside the name 'a@b'"},
        {"@", "a '@' without a group name"},
        {"@g", "groups are not available here ('@g')"},
        {"@x[1-2]", "the group name '@x[1-2]' has a '['"},
        {std::string("a\x01") + "b", "a control character in 'a\\x01b'"},
    };
    for (const auto& [text, what] : cases) {
        CAPTURE(text);
        const std::string err = error_of(text);
        CHECK(err.find(what) != std::string::npos);
        CHECK(err.rfind("node set '", 0) == 0);
        CHECK(err.find('\n') == std::string::npos);
        CHECK(err.find('\x01') == std::string::npos);
    }
    CHECK(error_of("x,n[5-1]") == "node set 'x,n[5-1]': a reversed range '5-1' in 'n[5-1]'");
    // A long text is cut in the message, which stays one short line.
    const std::string long_text = std::string(5000, 'a') + "[";
    CHECK(error_of(long_text).size() < 200);
    CHECK(error_of(long_text).find("aaa...': a '[' without its ']'") != std::string::npos);
}

TEST_CASE("nodeset: groups resolve through the caller's resolver") {
    const std::map<std::string, Names> table = {{"lab-b", {"ws01", "ws02", "ws03"}}, {"subnet:2", {"n4", "n5"}}};
    const GroupResolver groups = [&table](const std::string& name) {
        const auto it = table.find(name);
        if (it == table.end()) throw InputError("no group '@" + name + "'");
        return it->second;
    };
    CHECK(expand_nodeset("@lab-b", groups) == Names{"ws01", "ws02", "ws03"});
    CHECK(expand_nodeset("@lab-b!ws02,ws[10-11]", groups) == Names{"ws01", "ws03", "ws10", "ws11"});
    CHECK(expand_nodeset("@subnet:2,n1", groups) == Names{"n1", "n4", "n5"});
    CHECK(expand_nodeset("n[1-9]&@subnet:2", groups) == Names{"n4", "n5"});
    CHECK(error_of("ws01,@lab-c", groups) == "node set 'ws01,@lab-c': no group '@lab-c'");
}

TEST_CASE("nodeset: a map's members by node set, subnets as @subnet:N, --exclude") {
    // c0n0 c0n1 c0n2 | c1n0 c1n1: two subnets, numbered 0 and 1 as `map show` prints them.
    const Network net = Network::clusters({3, 2}, 1, 10);
    CHECK(select_members(net, "c0n[1-2],c1n0") == std::vector<NodeId>{1, 2, 3});
    CHECK(select_members(net, "c1n1,c0n0") == std::vector<NodeId>{0, 4});
    CHECK(select_members(net, "@subnet:1") == std::vector<NodeId>{3, 4});
    CHECK(select_members(net, "@subnet:0") == std::vector<NodeId>{0, 1, 2});
    CHECK(select_members(net, "@*", "@subnet:0") == std::vector<NodeId>{3, 4});
    CHECK(select_members(net, "c[0-1]n0", "c1n0") == std::vector<NodeId>{0});
    CHECK(select_members(net, "c0n[0-2]", "c0n[0-2]").empty());
    CHECK(error_of_select(net, "c0n[0-5]") ==
          "node set 'c0n[0-5]': c0n[3-5] are not members of the map (its members: c0n[0-2],c1n[0-1])");
    CHECK(error_of_select(net, "c0n0", "zz") ==
          "node set 'zz': zz is not a member of the map (its members: c0n[0-2],c1n[0-1])");
    CHECK(error_of_select(net, "@subnet:2") ==
          "node set '@subnet:2': no group '@subnet:2' (the map's groups: @subnet:0 to @subnet:1, @*)");
    CHECK(error_of_select(net, "@subnet:x").find("no group '@subnet:x'") != std::string::npos);
    CHECK(error_of_select(net, "@lab").find("no group '@lab'") != std::string::npos);
    const Network flat = Network::from_costs({"a", "b"}, {{0, 1}, {1, 0}});
    CHECK(error_of_select(flat, "@subnet:0") == "node set '@subnet:0': no group '@subnet:0': the map has no subnets");
    CHECK(select_members(flat, "@*") == std::vector<NodeId>{0, 1});
    CHECK(error_of_select(flat, "@lab") == "node set '@lab': no group '@lab' (the map has no subnets: its only group is @*)");
    const Network one = Network::clusters({2}, 1, 10);
    CHECK(error_of_select(one, "@subnet:1") == "node set '@subnet:1': no group '@subnet:1' (the map's groups: @subnet:0, @*)");
}

TEST_CASE("nodeset: named groups nest, mix with the map's, and name the known groups when unknown") {
    const Network net = Network::clusters({3, 2}, 1, 10);  // c0n[0-2] | c1n[0-1]
    const NodeGroups groups{{"lab-a", "c0n[0-1]"}, {"lab-b", "c1n0,@lab-a"}, {"most", "@*!@lab-a"}, {"odd", "@subnet:1^c1n0"}};
    const GroupResolver g = named_groups(groups, map_groups(net));
    CHECK(expand_nodeset("@lab-b", g) == Names{"c0n0", "c0n1", "c1n0"});
    CHECK(expand_nodeset("@most", g) == Names{"c0n2", "c1n0", "c1n1"});
    CHECK(expand_nodeset("@odd,@lab-a", g) == Names{"c0n0", "c0n1", "c1n1"});
    CHECK(select_members(net, "@lab-b", "c0n0", groups) == std::vector<NodeId>{1, 3});
    CHECK(select_members(net, "@*", "@most", groups) == std::vector<NodeId>{0, 1});
    CHECK(error_of("@lab-c", g) == "node set '@lab-c': no group '@lab-c' (the map's groups: @subnet:0 to @subnet:1, @*; "
                                   "the cluster file's groups: @lab-a, @lab-b, @most, @odd)");
    CHECK(error_of("@lab-c", named_groups(groups)) ==
          "node set '@lab-c': no group '@lab-c' (the groups: @lab-a, @lab-b, @most, @odd)");
    CHECK(error_of("@x", named_groups({})) == "node set '@x': no group '@x' (no groups are defined)");
    // An unknown group deep down is told once, as it is.
    const GroupResolver deep = named_groups({{"a", "n1,@b"}, {"b", "@c"}}, map_groups(net));
    CHECK(error_of("@a", deep).starts_with("node set '@a': no group '@c' (the map's groups:"));
    const GroupResolver bad = named_groups({{"a", "n1,@b"}, {"b", "n[1-"}});
    CHECK(error_of("@a", bad) == "node set '@a': group '@b': node set 'n[1-': a '[' without its ']'");
}

TEST_CASE("nodeset: a group that refers to itself is refused, naming the chain") {
    CHECK(error_of("@a", named_groups({{"a", "n1,@a"}})) == "node set '@a': group '@a' refers to itself (@a -> @a)");
    CHECK(error_of("n1,@a", named_groups({{"a", "@b"}, {"b", "n2,@c!n3"}, {"c", "@a"}})) ==
          "node set 'n1,@a': group '@a' refers to itself (@a -> @b -> @c -> @a)");
    // The same group twice is not a cycle; the resolver can be used again after a failure.
    const GroupResolver g = named_groups({{"a", "@b,@b"}, {"b", "n[1-2]"}, {"loop", "@loop"}});
    CHECK(expand_nodeset("@a,@b", g) == Names{"n1", "n2"});
    CHECK_FALSE(error_of("@loop", g).empty());
    CHECK(expand_nodeset("@a", g) == Names{"n1", "n2"});
    // A request's groups cannot make a daemon recurse without end or hold without bound.
    NodeGroups chain;
    for (int i = 0; i < 1000; ++i) chain["g" + std::to_string(i)] = "n" + std::to_string(i) + ",@g" + std::to_string(i + 1);
    chain["g1000"] = "n1000";
    CHECK(error_of("@g0", named_groups(chain)) == "node set '@g0': groups nested more than 64 deep (at '@g64')");
    NodeGroups wide;
    for (int i = 0; i < 10; ++i) wide["w" + std::to_string(i)] = "w" + std::to_string(i) + "n[1-99999]";
    const GroupResolver w = named_groups(wide);
    std::string first_error;
    for (int i = 0; i < 10 && first_error.empty(); ++i) first_error = error_of("@w" + std::to_string(i), w);
    CHECK(first_error == "node set '@w4': the groups name more than 400000 names in all");
}

TEST_CASE("nodeset: named groups over random graphs: unions as sets, cycles refused where reachable") {
    std::mt19937_64 rng(1616);
    for (int round = 0; round < 300; ++round) {
        const std::size_t k = 1 + rng() % 7;
        std::vector<std::set<std::size_t>> refs(k);
        std::vector<std::set<std::string>> own(k);
        NodeGroups groups;
        const bool acyclic = rng() % 2 == 0;
        for (std::size_t i = 0; i < k; ++i) {
            std::string text = "n" + std::to_string(rng() % 20);
            own[i].insert(text);
            for (std::size_t j = 0; j < k; ++j) {
                if ((acyclic && j >= i) || rng() % 3 != 0) continue;
                refs[i].insert(j);
                text += ",@g" + std::to_string(j);
            }
            groups["g" + std::to_string(i)] = text;
        }
        // What each group reaches, and whether a cycle is reachable from it.
        const auto reach = [&](std::size_t from) {
            std::set<std::size_t> seen;
            std::vector<std::size_t> todo(refs[from].begin(), refs[from].end());
            while (!todo.empty()) {
                const std::size_t v = todo.back();
                todo.pop_back();
                if (seen.insert(v).second) todo.insert(todo.end(), refs[v].begin(), refs[v].end());
            }
            return seen;
        };
        const GroupResolver g = named_groups(groups);
        for (std::size_t i = 0; i < k; ++i) {
            const auto r = reach(i);
            const bool cyclic = std::any_of(r.begin(), r.end(), [&](std::size_t v) { return reach(v).count(v) > 0; });
            std::string shown;
            for (const auto& [n, t] : groups) shown += n + ": " + t + "; ";
            CAPTURE(shown);
            CAPTURE(i);
            if (cyclic) {
                CHECK(error_of("@g" + std::to_string(i), g).find("refers to itself") != std::string::npos);
            } else {
                std::set<std::string> want = own[i];
                for (std::size_t v : r) want.insert(own[v].begin(), own[v].end());
                Names expected(want.begin(), want.end());
                nodeset_sort(expected);
                CHECK(expand_nodeset("@g" + std::to_string(i), g) == expected);
            }
        }
    }
}

TEST_CASE("nodeset: select_names keeps the members' order, @* is every member, over random lists") {
    std::mt19937_64 rng(7016);
    for (int round = 0; round < 500; ++round) {
        Names members;
        for (int i = 0; i < 12; ++i) {
            if (rng() % 2) members.push_back("ws" + std::to_string(i));
        }
        if (members.empty()) members.push_back("ws0");
        std::shuffle(members.begin(), members.end(), rng);
        const auto pick = [&] {
            std::set<std::string> chosen;
            std::string text;
            for (std::size_t k = 1 + rng() % 4; k-- > 0;) {
                const std::string& m = members[rng() % members.size()];
                chosen.insert(m);
                text += (text.empty() ? "" : ",") + m;
            }
            return std::pair{chosen, text};
        };
        const auto [to, to_text] = pick();
        const auto [out, out_text] = pick();
        const bool all = rng() % 4 == 0;
        const bool exclude = rng() % 2 == 0;
        Names expected;
        for (const auto& m : members) {
            if ((all || to.count(m)) && !(exclude && out.count(m))) expected.push_back(m);
        }
        CAPTURE(to_text);
        CAPTURE(out_text);
        CHECK(select_names(members, all ? "@*" : to_text, exclude ? out_text : "", {}) == expected);
    }
    const Names members{"b2", "a1", "c3"};
    CHECK(select_names(members, "@g", "", named_groups({{"g", "a1,c3"}})) == Names{"a1", "c3"});
    try {
        (void)select_names(members, "a[1-3]", "", {});
        FAIL("a[1-3] names non-members");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()) == "node set 'a[1-3]': a[2-3] are not members (the members: a1,b2,c3)");
    }
}

TEST_CASE("nodeset: fold then expand gives the same set, over random name sets") {
    std::mt19937_64 rng(20240516);
    const std::vector<std::string> texts = {"n", "ws", "rack", "a-b.", "x_", "", "node-", "c"};
    const auto pick = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    for (int round = 0; round < 400; ++round) {
        // A small universe, so that runs and products form; padding and widths mixed.
        const std::size_t runs = pick(4);
        const int top = 1 + static_cast<int>(pick(120));
        Names names;
        const std::size_t count = 1 + pick(150);
        std::vector<std::string> layout(runs + 1);
        for (auto& t : layout) t = texts[pick(texts.size())];
        const bool one_layout = pick(2) == 0;
        for (std::size_t k = 0; k < count; ++k) {
            std::string name;
            for (std::size_t d = 0; d <= runs; ++d) {
                name += one_layout ? layout[d] : texts[pick(texts.size())];
                if (d == runs) break;
                if (pick(25) == 0) {
                    name += "123456789012345678901";  // over 18 digits: folded as text
                    continue;
                }
                std::string digits = std::to_string(pick(static_cast<std::size_t>(top)));
                const std::size_t width = pick(3) == 0 ? 1 + pick(4) : 0;
                if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
                name += digits;
            }
            if (name.empty()) name = "e";
            names.push_back(name);
        }
        const std::string folded = fold_nodeset(names);
        CAPTURE(folded);
        const Names expanded = expand_nodeset(folded);
        const std::set<std::string> want(names.begin(), names.end());
        CHECK(std::set<std::string>(expanded.begin(), expanded.end()) == want);
        CHECK(expanded.size() == want.size());
    }
}

TEST_CASE("nodeset: one range folds back to itself, over random ranges and paddings") {
    std::mt19937_64 rng(3);
    for (int round = 0; round < 300; ++round) {
        const int width = static_cast<int>(rng() % 4);  // 0: unpadded
        const int top = width == 0 ? 100000 : (width == 1 ? 10 : (width == 2 ? 100 : 1000));
        const int lo = static_cast<int>(rng() % static_cast<unsigned>(top));
        const int hi = lo + static_cast<int>(rng() % static_cast<unsigned>(std::min(top - lo, 2000)));
        const Names names = seq("p", range(lo, hi), width);
        const std::string want = names.size() == 1 ? names[0] : "p[" + names.front().substr(1) + "-" + names.back().substr(1) + "]";
        CAPTURE(want);
        CHECK(fold_nodeset(names) == want);
        CHECK(expand_nodeset(want) == names);
    }
}

TEST_CASE("nodeset: operators agree with set operations left to right, over random expressions") {
    std::mt19937_64 rng(77);
    const auto pick = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    const std::string ops = ",!&^";
    for (int round = 0; round < 500; ++round) {
        std::string text;
        std::set<std::string> want;
        const std::size_t operands = 1 + pick(6);
        for (std::size_t k = 0; k < operands; ++k) {
            const char op = k == 0 ? ',' : ops[pick(ops.size())];
            // Either a range (with a step and padding) or a plain comma-free name.
            const std::string prefix = pick(3) == 0 ? "m" : "n";
            std::set<std::string> rhs;
            std::string operand;
            if (pick(4) == 0) {
                const int v = static_cast<int>(pick(30));
                operand = prefix + std::to_string(v);
                rhs.insert(operand);
            } else {
                const int lo = static_cast<int>(pick(30)), hi = lo + static_cast<int>(pick(30));
                const int step = pick(3) == 0 ? 1 + static_cast<int>(pick(4)) : 1;
                const int width = pick(3) == 0 ? 3 : 0;
                const Names names = seq(prefix, range(lo, hi, step), width);
                rhs.insert(names.begin(), names.end());
                const auto bound = [width](int v) {
                    std::string s = std::to_string(v);
                    if (static_cast<int>(s.size()) < width) s.insert(0, static_cast<std::size_t>(width) - s.size(), '0');
                    return s;
                };
                operand = prefix + "[" + bound(lo) + "-" + bound(hi) + (step > 1 ? "/" + std::to_string(step) : "") + "]";
            }
            if (k > 0) text += op;
            text += operand;
            std::set<std::string> next;
            switch (op) {
                case ',':
                    std::set_union(want.begin(), want.end(), rhs.begin(), rhs.end(), std::inserter(next, next.end()));
                    break;
                case '!':
                    std::set_difference(want.begin(), want.end(), rhs.begin(), rhs.end(), std::inserter(next, next.end()));
                    break;
                case '&':
                    std::set_intersection(want.begin(), want.end(), rhs.begin(), rhs.end(), std::inserter(next, next.end()));
                    break;
                default:
                    std::set_symmetric_difference(want.begin(), want.end(), rhs.begin(), rhs.end(),
                                                  std::inserter(next, next.end()));
            }
            want = std::move(next);
        }
        CAPTURE(text);
        const Names got = expand_nodeset(text);
        CHECK(std::set<std::string>(got.begin(), got.end()) == want);
        CHECK(sorted_unique(got));
        CHECK(got == sorted(Names(want.begin(), want.end())));
    }
}

TEST_CASE("nodeset: the sort order is a strict order, numbers compared as numbers, over random names") {
    std::mt19937_64 rng(5);
    Names names;
    for (int i = 0; i < 2000; ++i) {
        std::string n = (rng() % 2 ? "a" : "b") + std::to_string(rng() % 300);
        if (rng() % 3 == 0) n += "x" + std::string(rng() % 3, '0') + std::to_string(rng() % 20);
        names.push_back(std::move(n));
    }
    const std::set<std::string> unique(names.begin(), names.end());
    Names s(unique.begin(), unique.end());
    nodeset_sort(s);
    CHECK(s.size() == unique.size());
    CHECK(sorted_unique(s));
    // Plain "aN" names come in numeric order.
    Names plain;
    for (const auto& n : s) {
        if (n[0] == 'a' && n.find('x') == std::string::npos) plain.push_back(n);
    }
    REQUIRE(plain.size() > 100);
    for (std::size_t i = 1; i < plain.size(); ++i) {
        CHECK(std::stoi(plain[i - 1].substr(1)) < std::stoi(plain[i].substr(1)));
    }
}

TEST_CASE("nodeset: a group that names someone who is not a member keeps working for the others, with a warning") {
    const Names members{"a", "b"};
    std::vector<std::string> warned;
    const auto warn = [&](const std::string& line) { warned.push_back(line); };
    CHECK(select_names(members, "@odd", "", named_groups({{"odd", "b,c"}}), warn) == Names{"b"});
    REQUIRE(warned.size() == 1);
    CHECK(warned[0].find("group '@odd' names c, not a member: left out") == 0);
    // Said once per group, and a name typed in the node set itself is still an error.
    warned.clear();
    CHECK(select_names(members, "@odd,@odd", "", named_groups({{"odd", "b,c"}}), warn) == Names{"b"});
    CHECK(warned.size() == 1);
    CHECK_THROWS_WITH_AS((void)select_names(members, "@odd,c", "", named_groups({{"odd", "b,c"}}), warn),
                         doctest::Contains("c is not a member"), InputError);
    // The map's members the same way: a member the last probe did not reach.
    const Network net = Network::parametric({"a", "b"}, {{0, 1e-3}, {1e-3, 0}}, {{1e12, 1e8}, {1e8, 1e12}}, {{}, {}}, {{}, {}});
    warned.clear();
    CHECK(select_members(net, "@odd", "", {{"odd", "b,c"}}, warn) == std::vector<NodeId>{1});
    CHECK(warned.size() == 1);
    CHECK_THROWS_AS((void)select_members(net, "b,c", "", {}, warn), InputError);
}
