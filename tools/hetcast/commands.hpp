#pragma once
#include <string>
#include <vector>

namespace hetcast::cli {

/// Each subcommand takes its own arguments (without the subcommand name) and returns
/// the process exit status; InputError escapes to main, which prints it and exits 2.
int cmd_plan(const std::vector<std::string>& args);
int cmd_map(const std::vector<std::string>& args);
int cmd_sweep(const std::vector<std::string>& args);

}  // namespace hetcast::cli
