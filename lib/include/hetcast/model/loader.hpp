#pragma once
/// Network files (YAML). The forms are documented in conf/examples/README.md.
#include <filesystem>
#include <string>
#include <string_view>

#include "hetcast/model/network.hpp"

namespace hetcast {

/// Parses a network from YAML text. `origin` names the source in error messages.
/// Throws InputError("origin:line:column: what is wrong") on any bad input.
[[nodiscard]] Network parse_network(std::string_view yaml_text, std::string_view origin = "<string>");

/// Reads and parses a network file. Throws InputError when it cannot be read or is bad.
[[nodiscard]] Network load_network(const std::filesystem::path& file);

/// The parametric form of `net` as YAML (with its subnets, and `measured_at` when not
/// empty), such that parse_network gives the network back. Throws InputError for a
/// cost-matrix network.
[[nodiscard]] std::string format_network(const Network& net, std::string_view measured_at = {});

}  // namespace hetcast
