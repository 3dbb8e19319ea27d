// A participant landing a bundle it received (runtime/tree.hpp): the tree hook of run_tasks.
#include <unistd.h>

#include "hetcast/error.hpp"
#include "hetcast/runtime/tree.hpp"
#include "peer_impl.hpp"

namespace hetcast {

void Peer::Impl::land_bundle(const Job& job, MessageId m, const FileSink& bundle) const {
    const JobMessage& msg = job.plan.messages[m];
    const bool root = ::geteuid() == 0;
    // As rsync: only root can give files away; others keep their own and say so.
    if (msg.owner && !root) {
        log(LogLevel::warn,
            "job " + std::to_string(job.plan.job) + ": owners not applied ('" + cfg.name + "' does not run as root)");
    }
    const auto failed = land_tree(cfg.dest_root, msg.name, msg.tree, *bundle.descriptor(),
                                  LandOptions{msg.preserve, cfg.umask, msg.owner && root});
    if (!failed.empty()) throw Error(land_failures_text(failed, msg.tree.size()));
}

}  // namespace hetcast
