#pragma once
/// The documents `hetcast COMMAND --json` prints: one shape per command, each starting with
/// the schema version and the command's name (docs/json.md, docs/schema/).
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hetcast/model/network.hpp"

namespace hetcast {

/// The version every document carries. Fields may be added within a version; renaming or
/// removing one, or changing its type, makes the next.
inline constexpr int json_schema_version = 1;

/// {"version": json_schema_version, "command": command}: the start of every document.
[[nodiscard]] nlohmann::json json_document(std::string_view command);

/// `j` indented by two spaces. Strings that are not valid UTF-8 (member and file names,
/// error texts from anywhere) are written with U+FFFD for each bad byte; never throws for them.
[[nodiscard]] std::string dump_json(const nlohmann::json& j);

/// A map as the daemons keep it (a parametric network): {"measured_at": text or null,
/// "nodes": [names], "latency": [[s]], "bandwidth": [[bytes/s]], "send_overhead" and
/// "recv_overhead": [{"fixed": s, "per_byte": s}] per node, "subnets": [[names]],
/// "capacity": {"egress", "ingress", "disk": per node, "uplink": per subnet} (bytes/s, null
/// where nothing limits) or null}. Diagonals of the matrices are null.
[[nodiscard]] nlohmann::json map_json(const Network& net, std::string_view measured_at = {});

}  // namespace hetcast
