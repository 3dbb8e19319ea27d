#pragma once
// A try of a job as data, no connections: its plan and report made from the spec, the
// flows of other jobs it runs beside, and the tally of how it ended.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/peer_types.hpp"
#include "hetcast/runtime/report.hpp"
#include "hetcast/sim/flow.hpp"
#include "../job/job_state.hpp"

namespace hetcast::detail {

/// What one try of a push left: who failed on their own account (with why), and whether
/// the push must stop (cancelled, timed out, the coordinator stopping, the source failing).
struct Try {
    std::map<std::string, std::string> failed;
    bool final = false;
    double started = 0;  ///< when the participants were told to start (or the try began)
    bool not_started = false;  ///< a participant refused or failed its plan: nothing moved
};

/// The flows of other jobs that a try runs beside.
using Beside = PeerBeside;

/// The report of a try before it runs: the prediction, and one outcome per destination.
JobReport report_of(const JobSpec& spec, const Timeline& predicted, std::size_t beside);
/// What every participant's plan shares (all but the job id, the participants and their
/// tasks), from the spec; adds the messages' bytes to `report`. Throws InputError.
JobPlan plan_of(const JobSpec& spec, NodeId self, const std::string& name, std::uint64_t chunk, JobReport& report);
/// How a try ended, read from `k`: who failed on their own account (into `result`), each
/// outcome delivered or why not, the hops' times from `t0`; the last progress to the spec.
void tally(Coord& k, const JobSpec& spec, const std::string& stop_reason, const std::set<std::string>& ended_before,
           double t0, Try& result, JobReport& report);
/// The flows in members' {"cmd": "flows"} answers (by member) that name two members of
/// `net`: each receiver names only its own receives, and a planned push's flows count once,
/// as its coordinator reports them when it answered, else as the first member that saw
/// them; push `own` and push `planning` (this one's keys) are left out.
Beside beside_of(const Network& net, std::map<std::string, nlohmann::json> answers, const std::string& own = {},
                 const std::string& planning = {});
/// `report` (made by report_of() beside `planned`) predicted again beside `at_start`, what
/// ran when the try started, if other jobs had come since (another count of jobs, or more
/// bytes left among them): `predicted` and `beside` become the start's, the planning's kept
/// in `predicted_at_plan` and `beside_at_plan`. Whether it changed anything.
bool repredict(const JobSpec& spec, const Beside& planned, const Beside& at_start, JobReport& report);
/// Whether none of the members that answered is at its max_jobs.
bool has_room(const std::vector<nlohmann::json>& answers);

}  // namespace hetcast::detail
