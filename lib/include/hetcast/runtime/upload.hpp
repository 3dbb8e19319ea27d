#pragma once
/// A push of a file on the operator's machine (no daemon there): the CLI describes the file
/// (size, SHA-256, a digest per piece: one read) and streams it to the member it talks to,
/// the entry member, which is the schedule's source and forwards each piece once it is in
/// and verified, while the rest is still arriving (cut-through from the upload on).
#include <chrono>
#include <cstdint>
#include <functional>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hetcast/net/digest.hpp"
#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/tree.hpp"
#include "hetcast/sched/schedule.hpp"

namespace hetcast {

class Peer;

/// What an upload is announced with, in the push request's "upload" object (docs/protocol.md).
struct UploadSpec {
    std::uint64_t size = 0;
    net::Digest sha{};
    std::uint64_t piece = 0;
    std::vector<net::Digest> pieces;  ///< one per piece, the last may be shorter
    unsigned mode = 0644;
    std::int64_t mtime = 0;  ///< nanoseconds since the epoch
};

/// The most pieces an upload may have: its job plan carries every digest twice (in the
/// message and in the order, which is the operator's request) in one frame.
inline constexpr std::uint64_t max_upload_pieces = max_pieces / 2;

[[nodiscard]] nlohmann::json to_json(const UploadSpec& u);
/// Throws InputError for a missing or bad field, a piece size out of [min_piece, max_piece],
/// a digest count that does not match size and piece, or more than max_upload_pieces.
[[nodiscard]] UploadSpec upload_from_json(const nlohmann::json& j);

/// A file on this machine, described for an upload in one read, and a body that streams it
/// from the descriptor opened then. Throws InputError when it is missing, unreadable or no
/// regular file.
struct LocalFile {
    UploadSpec spec;
    std::shared_ptr<const net::MessageBody> body;
    std::vector<TreeEntry> tree;  ///< a bundle's manifest (describe_local_tree())
};
[[nodiscard]] LocalFile describe_local_file(const std::filesystem::path& file, std::uint64_t piece);
/// Several files or directory trees (`push -r`, runtime/tree.hpp) as one bundle; `piece`
/// is asked for once the bundle's size is known (0: refused as too large). Two reads.
[[nodiscard]] LocalFile describe_local_tree(const std::vector<std::string>& args, const TreeOptions& options,
                                            const std::function<std::uint64_t(std::uint64_t size)>& piece);

/// The entry member's side: the bytes of upload `id()` from the operator's connection, each
/// piece checked against its digest before anything reads it; body() is the message as its
/// verified prefix grows. They go to an unlinked temporary file in `temp_dir` (no name:
/// nothing is left behind whatever ends the push, a crash included), or, when this member
/// is also a destination, to the copy it lands (`landing`, a temporary name next to it until
/// finish()). The upload fails (body() readers then fail) when a piece does not match, more
/// or other bytes come, the operator's connection closes before the end, or nothing comes
/// for `stall`. Thread-safe.
class Upload {
public:
    struct Landing {
        std::filesystem::path root;  ///< dest_root
        std::string name;            ///< relative to it (a bundle: the directory it lands in)
        bool preserve = true;        ///< mode and mtime exactly; else mode less umask, landing time
        unsigned umask = 022;
        std::vector<TreeEntry> tree;  ///< a bundle's manifest: landed from the temporary file at the end
        bool owner = false;           ///< a bundle's owners applied (a daemon running as root)
    };
    Upload(Peer& peer, UploadSpec spec, std::string operator_name, std::chrono::milliseconds stall,
           const std::filesystem::path& temp_dir, std::optional<Landing> landing);
    ~Upload();
    Upload(const Upload&) = delete;
    Upload& operator=(const Upload&) = delete;

    [[nodiscard]] std::uint64_t id() const { return id_; }
    [[nodiscard]] std::shared_ptr<const net::MessageBody> body() const { return body_; }
    /// Waits for the whole upload, verified, and lands this member's copy when it has one.
    /// Returns why it failed, or nothing. Once.
    [[nodiscard]] std::optional<std::string> finish();
    /// Fails the upload (a cancelled job): readers stop waiting.
    void fail(const std::string& why);
    /// Why the upload failed, if it did (so far).
    [[nodiscard]] std::optional<std::string> failure() const;

private:
    struct Core;  // what the peer's hooks reach, which may run while this is destroyed
    Peer& peer_;
    std::uint64_t id_ = 0;
    std::shared_ptr<Core> core_;
    std::shared_ptr<const net::MessageBody> body_;
    std::thread watcher_;
};

}  // namespace hetcast
