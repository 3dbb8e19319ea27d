#pragma once
// The sweep's settings: every generator's parameters with their defaults, and the range
// overrides that replace some of them.
#include <cstddef>
#include <string>

#include "hetcast/model/generators.hpp"
#include "hetcast/sweep/sweep.hpp"

namespace hetcast::sweep::detail {

inline constexpr std::size_t max_nodes = 10000;

// Every generator's parameters with their defaults; overrides replace some.
struct Settings {
    ExecModel model = ExecModel::blocking;
    BhatParams bhat;              // fig. 4 and 6
    BhatClusterParams clustered;  // fig. 5
    Range size{1e6, 1e6};
    std::size_t system = 100;
    WuParams wu;
    std::string link = "fast";
    PatternParams pattern;
    GridParams grid;
    LocalStart local_start = LocalStart::after_last_send;
    ClusterParams clusters;
};

/// Applies `--key value` for generator g. Throws InputError for a key g does not take or a bad value.
void apply(Settings& s, const GeneratorInfo& g, const std::string& key, const std::string& value);
/// The effective parameters, as the rows' `parameters` column holds them.
[[nodiscard]] std::string parameters_text(const GeneratorInfo& g, const Settings& s);

}  // namespace hetcast::sweep::detail
