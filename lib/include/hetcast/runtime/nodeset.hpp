#pragma once
/// Node sets: the host-list syntax of ClusterShell (`nodeset`, `clush -w`) and pdsh, which
/// HPC admins already type.
///
///   ws[01-40,45]            ws01 … ws40, ws45 (zero padding kept as written)
///   n[1-10/2]               n1 n3 n5 n7 n9 (a step)
///   r[1-2]n[1-3]            r1n1 r1n2 r1n3 r2n1 r2n2 r2n3 (several bracket groups: a product)
///   a,b,c                   a plain list is a node set too
///   @subnet:2  @*  @lab-b   groups, resolved by the caller (GroupResolver): the map's,
///                           and those a cluster file names (named_groups)
///   n[1-10]!n[5-6]          difference; `&` intersection, `^` symmetric difference, `,` union
///
/// Operators are read left to right with no precedence, as ClusterShell does:
/// `a,b!c` is (a ∪ b) \ c and `a!b,c` is (a \ b) ∪ c. Whitespace around an element is
/// ignored (`a, b`); inside a name it is an error. A number in brackets is padded to the
/// width of the range's first bound when that bound has a leading zero (`[08-11]`: 08 09
/// 10 11); a last bound with a leading zero must have that width too (`[1-05]` is an error).
/// Outside brackets a name is taken as written (`node1-5` is one name).
///
/// Expanded names come in ClusterShell's sorted order: by the name with its digit runs
/// blanked out, then by the digit runs as numbers, left to right (n9 before n10, a1b9
/// before a2b1), then by the text (n01 before n1). nodeset_sort sorts any list so.
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hetcast/model/network.hpp"

namespace hetcast {

/// The most names one node set may expand to (also every range, group and partial result
/// on the way): more is refused rather than allocated.
inline constexpr std::size_t nodeset_max_names = 100000;

/// The names of group `name` (the text after '@', e.g. "subnet:2" or "*"). Throws
/// InputError for a group it does not know.
using GroupResolver = std::function<std::vector<std::string>(const std::string& name)>;

/// Every name `text` denotes, each once, in the order above. `groups` resolves `@NAME`;
/// without one a group is an error. Throws InputError, one line naming the text and what
/// is wrong: an unbalanced or nested bracket, an empty element, range or group name, a
/// reversed range (`[5-1]`), a zero step, a padding mismatch, a number over 18 digits,
/// more than nodeset_max_names names, an unknown group. An empty result (`n1!n1`) is not
/// an error: callers that need a name say so.
[[nodiscard]] std::vector<std::string> expand_nodeset(std::string_view text, const GroupResolver& groups = {});

/// The shortest node set this function finds for `names` (duplicates ignored): names that
/// differ only in their digit runs are folded along every run (`ws01,ws02,ws03,ws05` →
/// `ws[01-03,05]`; `a1b1,a1b2,a2b1,a2b2` → `a[1-2]b[1-2]`), elements in the order above.
/// expand_nodeset of the result gives `names` back, for every name that can be written
/// in a node set (not empty, no whitespace, none of `,!&^[]@`); others are printed as
/// they are. Never throws for such input; empty input gives "".
[[nodiscard]] std::string fold_nodeset(const std::vector<std::string>& names);

/// ClusterShell's order (above): a strict weak order, equal only for equal strings.
[[nodiscard]] bool nodeset_less(std::string_view a, std::string_view b);
void nodeset_sort(std::vector<std::string>& names);

/// The groups a map gives: `@subnet:N`, the subnets as `hetcast map show` numbers them
/// (from 0), and `@*`, every member. The resolver refers to `net`, which must outlive it.
[[nodiscard]] GroupResolver map_groups(const Network& net);

/// Groups by name, as a cluster file's `groups:` gives them: each a node set, which may
/// name other groups (`@lab`), the map's (`@subnet:2`, `@*`) included.
using NodeGroups = std::map<std::string, std::string>;

/// Whether `name` may name a group of NodeGroups: letters, digits, '.', '_', '-', from a
/// letter or digit (no ':', which the map's groups use).
[[nodiscard]] bool valid_group_name(std::string_view name);

/// Resolves `@NAME` for a group of `groups` by expanding its node set (groups in it
/// resolved the same way, each once), any other name through `then`. Throws InputError for
/// a group that refers to itself (naming the chain) and for an unknown group (naming the
/// known ones, `then`'s included). The resolver keeps its own state: one thread at a time.
[[nodiscard]] GroupResolver named_groups(NodeGroups groups, GroupResolver then = {});

/// The map's groups where there is no map: `@*` and `@subnet:N` stand for no names, any
/// other group is unknown. For checking node sets and groups before the map is at hand.
[[nodiscard]] GroupResolver unresolved_map_groups();

/// Told once per group that names someone who is not a member (one who left, one the map
/// lacks): that name is left out and the group's other members still count.
using GroupWarning = std::function<void(const std::string& line)>;

/// The names of `members` that node set `to` names, less those `exclude` names (empty:
/// none), in `members`' order; `@*` is every member. Throws InputError naming the names
/// that are not members (folded) when the node set names them itself; a group's are left
/// out, with a line to `warn`.
[[nodiscard]] std::vector<std::string> select_names(const std::vector<std::string>& members, std::string_view to,
                                                    std::string_view exclude, const GroupResolver& groups,
                                                    const GroupWarning& warn = {});

/// The members of `net` that node set `to` names, less those `exclude` names (empty: none),
/// in the map's order. Groups: `groups`, then map_groups. Throws InputError naming the
/// names that are not members of the map (folded), for `to` and `exclude` alike, when the
/// node set names them itself; a group's are left out, with a line to `warn`.
[[nodiscard]] std::vector<NodeId> select_members(const Network& net, std::string_view to,
                                                 std::string_view exclude = {}, const NodeGroups& groups = {},
                                                 const GroupWarning& warn = {});

}  // namespace hetcast
