// A participant landing a bundle it received (runtime/tree.hpp): the tree hook of run_tasks.
#include <unistd.h>

#include "hetcast/error.hpp"
#include "hetcast/runtime/tree.hpp"
#include "peer_tasks.hpp"

namespace hetcast::detail {

void TaskRunner::land_bundle(const Job& job, MessageId m, const FileSink& bundle) const {
    const JobMessage& msg = job.plan.messages[m];
    const bool root = ::geteuid() == 0;
    // As rsync: only root can give files away; others keep their own and say so.
    if (msg.owner && !root) {
        core_.log(LogLevel::warn,
            "job " + std::to_string(job.plan.job) + ": owners not applied ('" + core_.cfg.name + "' does not run as root)");
    }
    const auto failed = land_tree(core_.cfg.dest_root, msg.name, msg.tree, *bundle.descriptor(),
                                  LandOptions{msg.preserve, core_.cfg.umask, msg.owner && root});
    if (!failed.empty()) throw Error(land_failures_text(failed, msg.tree.size()));
}

}  // namespace hetcast::detail
