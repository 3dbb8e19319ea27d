#pragma once
/// What an operator's push order lets a job do, as a member that checks a plan reads the
/// order on its own map: the messages, in the order's order, with who sends each, where it
/// lands and to whom it may go. A plan runs under the order only when it has exactly these
/// messages, each going to members the order names (runtime/plan_order.hpp: check_plan_order).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hetcast/net/digest.hpp"

namespace hetcast {

struct ScopedMessage {
    std::string source;  ///< the member that sends it
    /// Where its source reads it ("file:/path", "gen:SIZE:SEED"); empty: a file of the
    /// coordinator's own or the operator's upload, which the order names by path only.
    std::string origin;
    std::string name;   ///< where it lands under dest_root (a bundle: its landing directory)
    bool tree = false;  ///< a bundle of files (runtime/tree.hpp)
    std::optional<std::uint64_t> size;  ///< when the order says (uploads, generated payloads)
    std::optional<net::Digest> sha;     ///< when the order says (uploads)
    std::vector<std::string> dests;     ///< the members it may go to
};

struct OrderScope {
    std::vector<ScopedMessage> messages;
};

/// Reads a push order (a request whose signature was checked) on a member's map. Throws
/// InputError when the order allows no job (not a push, no map to read it on, ...).
using OrderScopeFn = std::function<OrderScope(const nlohmann::json& order)>;

}  // namespace hetcast
