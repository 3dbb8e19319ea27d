#pragma once
#include <string>
#include <vector>

namespace hetcast::cli {

/// Each subcommand takes its own arguments (without the subcommand name) and returns
/// the process exit status; InputError escapes to main, which prints it and exits 2.
int cmd_plan(const std::vector<std::string>& args);
int cmd_map(const std::vector<std::string>& args);
int cmd_sweep(const std::vector<std::string>& args);
int cmd_sweep_live(const std::vector<std::string>& args);  // cmd_sweep_live.cpp: `sweep --live`
int cmd_push(const std::vector<std::string>& args);    // cmd_push.cpp
int cmd_probe(const std::vector<std::string>& args);   // cmd_cluster.cpp
int cmd_status(const std::vector<std::string>& args);  // cmd_cluster.cpp
int cmd_leave(const std::vector<std::string>& args);   // cmd_cluster.cpp
int cmd_jobs(const std::vector<std::string>& args);    // cmd_jobs.cpp
int cmd_cancel(const std::vector<std::string>& args);  // cmd_jobs.cpp
int cmd_keys(const std::vector<std::string>& args);    // cmd_keys.cpp
/// `hetcast map show ...`: cmd_map hands its arguments after "show" here (cmd_cluster.cpp).
int cmd_map_show(const std::vector<std::string>& args);

}  // namespace hetcast::cli
