#pragma once
// What nodeset.cpp and nodeset_groups.cpp share: node set text in one-line messages.
#include <string>
#include <string_view>

namespace hetcast::detail {

/// The text as it can go in a one-line message: quoted, control bytes escaped, long text cut.
[[nodiscard]] std::string quoted(std::string_view s);

}  // namespace hetcast::detail
