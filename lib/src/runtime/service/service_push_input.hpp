#pragma once
// What a push sends, read from its request before anything moves (Pushes, service_push.cpp):
// a file on the operator's disk streamed in (an Upload), a file on this member, a bundle
// of files and trees, or a pattern's messages as their sources describe them. Plain
// functions of the request, the config and the peer: no state of their own.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/runtime/config.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/peer.hpp"
#include "hetcast/runtime/report.hpp"
#include "hetcast/runtime/upload.hpp"
#include "hetcast/sched/pattern.hpp"

namespace hetcast::detail {

/// A push's one input, as its job takes it, and how the log and history name it.
struct PushInput {
    JobInput input;
    std::string what;
    /// A file on the operator's disk: streamed in by the CLI on the request's connection;
    /// this member is the source and forwards each piece once it is in and verified.
    std::unique_ptr<Upload> up;
    std::uint64_t upload_piece = 0;         ///< the upload's piece size
    std::optional<std::string> self_error;  ///< this member, a destination, cannot take its copy
};

/// One file stays a plain message; several files, or any -r, are one bundle
/// (runtime/tree.hpp). `self`: this member is a destination of the upload. An upload's id
/// goes to the caller at once (`respond`). Throws InputError for what the request cannot have.
PushInput push_input(const nlohmann::json& req, const std::vector<std::string>& files, const std::string& dest_dir,
                     bool self, const std::string& who, const DaemonConfig& cfg, Peer& peer,
                     const Peer::Responder& respond);

/// After an upload's job: this member's own copy lands once the whole upload is in and
/// verified (an outcome of its own, from the operator). When no destination got the file
/// the job is over (failed, cancelled) and so is the upload.
void finish_upload(Upload& up, JobReport& r, bool self, const std::optional<std::string>& self_error,
                   const std::string& who, const std::string& here, std::chrono::steady_clock::time_point started);

/// A pattern's inputs: each entry's source serves its own file (or a generated payload),
/// which lands under `dest_dir`; the sources tell their sizes (set in `pr`), checking
/// `req`, the operator's order.
std::vector<JobInput> pattern_inputs(PatternRequest& pr, const Network& net, const std::string& dest_dir, Peer& peer,
                                     const nlohmann::json& req);

}  // namespace hetcast::detail
