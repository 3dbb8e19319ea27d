#pragma once
// What the network loader says of bad input, for the loader tests.
#include <string>

#include "hetcast/error.hpp"
#include "hetcast/model/loader.hpp"

namespace hetcast::test {

/// The InputError message parse_network gives for `yaml` (origin "t.yaml"), or "" when it parses.
inline std::string error_of(const std::string& yaml) {
    try {
        (void)parse_network(yaml, "t.yaml");
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace hetcast::test
