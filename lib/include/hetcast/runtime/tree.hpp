#pragma once
/// Directory trees pushed as one message (a "bundle"): the regular files' bytes back to
/// back in the manifest's order, planned, relayed and verified like a single file. The
/// manifest travels in the job plan; destinations receive the bundle into one temporary
/// file and, once it is verified, carve each file out of it and land the tree.
///
/// Source side: build_tree() walks the arguments (lstat, no symlink inside a tree
/// followed), refuses collisions and special files; TreeBody streams the files.
/// Destination side: land_tree() recreates directories, files and symlinks beneath a
/// root without following any symlink, each file verified against its own SHA-256.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hetcast/net/digest.hpp"
#include "hetcast/net/transport.hpp"

namespace hetcast {

struct TreeEntry {
    enum class Kind { file, dir, symlink };
    std::string path;  ///< relative to the landing directory, normalised, '/'-separated
    Kind kind = Kind::file;
    std::uint64_t size = 0;  ///< files; their bytes follow each other in manifest order
    net::Digest sha{};       ///< files
    unsigned mode = 0644;    ///< permission bits (rwx only)
    std::int64_t mtime = 0;  ///< nanoseconds since the epoch
    std::string target;      ///< symlinks: the link's text, verbatim
    std::optional<std::uint32_t> uid, gid;  ///< only with --preserve-owner
    friend bool operator==(const TreeEntry&, const TreeEntry&) = default;
};

inline constexpr std::size_t max_tree_entries = 100'000;
inline constexpr std::size_t max_tree_text = std::size_t{8} << 20;  ///< path and target bytes in all
/// The manifest's JSON a source sends at most. A job plan travels in one frame
/// (max_frame_payload, 8 MiB + 4 KiB): with max_pieces piece digests (4.2 MiB of JSON) and
/// the order, the plan keeps 0.8 MiB to spare.
inline constexpr std::size_t max_manifest_bytes = std::size_t{3} << 20;
/// An upload's: its plan carries the manifest and the digests twice (the order is the
/// operator's request, which holds them too); as much to spare with 32768 digests (2 MiB
/// pieces, up to 64 GiB).
inline constexpr std::size_t max_upload_manifest_bytes = max_manifest_bytes / 2;

[[nodiscard]] nlohmann::json tree_to_json(const std::vector<TreeEntry>& tree);
/// Throws InputError on anything malformed or unsafe: a path that is empty, absolute, not
/// normalised or has a `..`; a duplicate; an entry beneath a file or symlink of the
/// manifest; modes over 0777; file sizes not adding up to `message_size`; more than
/// max_tree_entries entries or max_tree_text bytes of text.
[[nodiscard]] std::vector<TreeEntry> tree_from_json(const nlohmann::json& j, std::uint64_t message_size);
/// The checks of tree_from_json() on a manifest already decoded. Throws InputError.
void check_tree(const std::vector<TreeEntry>& tree, std::uint64_t message_size);

struct TreeCounts {
    std::uint64_t files = 0, dirs = 0, links = 0, bytes = 0;
};
[[nodiscard]] TreeCounts count_tree(const std::vector<TreeEntry>& tree);

/// The file of a bundle whose bytes are in flight once `bytes` of the stream reached every
/// destination: the first file not wholly among them (the last when all are), its index
/// among the tree's files, how many files there are, and its path ("" without files).
struct InFlight {
    std::size_t index = 0, files = 0;
    std::string path;
};
[[nodiscard]] InFlight in_flight(const std::vector<TreeEntry>& tree, std::uint64_t bytes);

/// What build_tree() found: the manifest (sorted by path) and where each entry comes from.
struct BuiltTree {
    std::vector<TreeEntry> entries;
    std::vector<std::filesystem::path> sources;  ///< absolute, per entry
};

struct TreeOptions {
    bool recursive = false;
    bool owner = false;  ///< record uid and gid
};

/// Walks `args` (absolute paths) as `push` sends them: each lands under its own base name.
/// An argument that is a symlink is followed (as scp, pdcp and `cp -H` do); inside a
/// directory symlinks are entries of their own, never followed. Throws InputError, one
/// line, on: a directory without `recursive` ("'d' is a directory (use -r)"), a special
/// file (fifo, socket, device), two sources landing at the same path (naming both), an
/// entry beneath a file of another source, too many entries.
[[nodiscard]] BuiltTree build_tree(const std::vector<std::string>& args, const TreeOptions& options);

/// The files of a built tree, back to back. Constructing it reads every file once (each
/// checked against `serve_roots` through its descriptor), filling in the manifest's
/// per-file SHA-256 and the whole stream's. Readers open one file at a time.
class TreeBody final : public net::MessageBody {
public:
    /// Throws InputError when a file cannot be read, is not served, or changed size.
    /// Without `serve_roots` (embedded peers, tests), files are not checked against any.
    TreeBody(BuiltTree tree, const std::vector<std::filesystem::path>* serve_roots);
    [[nodiscard]] std::uint64_t size() const override { return size_; }
    [[nodiscard]] net::Digest sha256() const override { return sha_; }
    [[nodiscard]] std::unique_ptr<Reader> open() const override;
    [[nodiscard]] const std::vector<TreeEntry>& entries() const { return tree_->entries; }

private:
    std::shared_ptr<const BuiltTree> tree_;
    std::shared_ptr<const std::vector<std::filesystem::path>> roots_;  ///< null: no check
    std::uint64_t size_ = 0;
    net::Digest sha_{};
};

struct LandOptions {
    /// Modes exactly as sent and mtimes set (else modes less `umask`, mtime the landing time).
    bool preserve = true;
    unsigned umask = 022;
    /// Apply the entries' uid and gid (only a receiver running as root can).
    bool owner = false;
};

/// One entry that did not land, and why.
struct LandFailure {
    std::string path;
    std::string why;
};

/// Lands `tree` under `root / landing` (landing "." is root itself) from the verified
/// bundle readable through `bundle`: directories first (created beneath root, no symlink
/// followed), then each file carved out into a temporary name, verified against its own
/// SHA-256, given its mode and mtime, fsynced and renamed; then symlinks (created under a
/// temporary name and renamed, never followed); then directory modes and mtimes, deepest
/// first. An entry that cannot land is skipped with its reason and the others go on;
/// nothing lands under its final name unverified and no temporary file is left.
[[nodiscard]] std::vector<LandFailure> land_tree(const std::filesystem::path& root, const std::string& landing,
                                                 const std::vector<TreeEntry>& tree, int bundle,
                                                 const LandOptions& options);

/// Refuses (InputError, before anything moves) a tree whose landing directory leaves `root`
/// or one of whose entries would land at a path over PATH_MAX or with a name over NAME_MAX
/// (files.hpp: check_path_limits). The source checks with root "/", a destination with its
/// dest_root.
void check_landing(const std::filesystem::path& root, const std::string& landing, const std::vector<TreeEntry>& tree);

/// One line on what did not land: "2 of 9 entries did not land: 'a/x': why; ...".
[[nodiscard]] std::string land_failures_text(const std::vector<LandFailure>& failed, std::size_t entries);

/// Where a destination receives a bundle before it lands: a temporary file in the landing
/// directory (`landing`, "." for root), named after the bundle's checksum so that the next
/// try of the same push finds it (parked cut-through copies).
[[nodiscard]] std::filesystem::path bundle_path(const std::filesystem::path& root, const std::string& landing,
                                                const net::Digest& sha);

}  // namespace hetcast
