#pragma once
#include <string>
#include <vector>

namespace hetcast::cli {

/// Exit statuses of every command (the table in man/hetcast.1.in and the README).
inline constexpr int exit_ok = 0;           ///< done, everywhere asked
inline constexpr int exit_failed = 1;       ///< the operation failed (a push nobody got, a probe that failed)
inline constexpr int exit_usage = 2;        ///< bad input: usage, a bad value, no such file, job or member
inline constexpr int exit_unreachable = 3;  ///< no daemon reached, identity refused, daemon lost or silent
inline constexpr int exit_partial = 4;      ///< done for some: members down, some destinations failed
inline constexpr int exit_interrupted = 130;  ///< Ctrl-C: the push was cancelled

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
int cmd_join(const std::vector<std::string>& args);    // cmd_members.cpp
int cmd_jobs(const std::vector<std::string>& args);    // cmd_jobs.cpp
int cmd_cancel(const std::vector<std::string>& args);  // cmd_jobs.cpp
int cmd_wait(const std::vector<std::string>& args);    // cmd_push.cpp
int cmd_keys(const std::vector<std::string>& args);    // cmd_keys.cpp
/// `hetcast map show ...`: cmd_map hands its arguments after "show" here (cmd_cluster.cpp).
int cmd_map_show(const std::vector<std::string>& args);

}  // namespace hetcast::cli
