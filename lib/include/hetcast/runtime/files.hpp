#pragma once
/// Where received files go, and how they land: under a destination root, via a temporary
/// name, checked, fsynced, then renamed. Nothing lands under its final name unverified.
#include <ctime>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "hetcast/net/digest.hpp"
#include "hetcast/net/transport.hpp"

namespace hetcast {

/// `root / relative`, refusing an empty, absolute or escaping path (any `..` component,
/// or a result outside root). Throws InputError("destination path '...' leaves the
/// destination root") before anything is written; also for a result over the limits of
/// check_path_limits.
[[nodiscard]] std::filesystem::path confine(const std::filesystem::path& root, std::string_view relative);

/// Linux's limits on a path: PATH_MAX bytes with its NUL, NAME_MAX per name.
inline constexpr std::size_t path_max = 4096;
inline constexpr std::size_t name_max = 255;
/// Throws InputError("WHAT '...' has N bytes, over PATH_MAX ...") for a path that the kernel
/// would refuse (ENAMETOOLONG): longer than path_max - 1 bytes, or a name of it longer
/// than name_max.
void check_path_limits(std::string_view path, std::string_view what);

/// `file` if it lies under one of `roots` once every symlink on its way is resolved (a
/// link inside a root that points out of it does not count). Throws InputError naming the
/// file and the roots ("none": the daemon serves no files until its operator lists some).
[[nodiscard]] std::filesystem::path served(const std::filesystem::path& file,
                                           const std::vector<std::filesystem::path>& roots);
/// The same for a file already open as `fd` (named `file` in errors): where the descriptor
/// really points, so that nothing swapped in after the check is read.
void served(int fd, const std::filesystem::path& file, const std::vector<std::filesystem::path>& roots);

/// The directory `relative` beneath `root`, each missing one created (mode 0755, the root
/// itself too), reached without following a symbolic link (openat2 RESOLVE_BENEATH |
/// RESOLVE_NO_SYMLINKS); its descriptor, closed with the last owner. Throws hetcast::Error.
[[nodiscard]] std::shared_ptr<int> confined_directory(const std::filesystem::path& root,
                                                      const std::filesystem::path& relative);

/// Nanoseconds since the epoch as a timespec (tv_nsec in [0, 1e9), also before 1970).
[[nodiscard]] timespec to_timespec(std::int64_t ns);

/// SHA-256 of chunks added in order. Threaded, it hashes on a thread of its own while the
/// caller goes on receiving and writing (a receiver's hop then costs the slower of the two,
/// not their sum); add() blocks only while more than `max_queued` bytes wait. Not threaded,
/// add() hashes at once. One producer; finish() once.
class ChunkHasher {
public:
    explicit ChunkHasher(bool threaded, std::size_t max_queued = std::size_t{8} << 20);
    ~ChunkHasher();
    ChunkHasher(const ChunkHasher&) = delete;
    ChunkHasher& operator=(const ChunkHasher&) = delete;

    void add(std::vector<std::byte> chunk);
    void add(std::span<const std::byte> data);
    /// The digest of everything added; waits for the queue to drain.
    [[nodiscard]] net::Digest finish();

private:
    void run();

    net::Sha256 sha_;
    std::size_t max_queued_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::vector<std::byte>> queue_;
    std::size_t queued_ = 0;
    bool closed_ = false;
    std::thread worker_;
};

/// The temporary name of a file being received: ".NAME.hetcast-TAG.part", with NAME cut
/// short (by bytes) so that the whole fits in 255 bytes. The daemon removes such files
/// left by an earlier run.
[[nodiscard]] std::string temp_name(const std::string& filename, std::uint64_t tag);
/// A random tag for temp_name(): a generator per thread, seeded once from std::random_device
/// (reading that device for every file was 5% of landing a tree of 2000 small files).
[[nodiscard]] std::uint64_t temp_tag();

/// Writes a file under a temporary name (temp_name()) next to its final path. verify() checks the
/// SHA-256; from then on body() reads the verified bytes (through the open descriptor, so
/// it stays readable while land() renames the file). land() fsyncs, renames into place and
/// fsyncs the directory. Destroyed without landing, it removes the temporary file.
/// Messages of at least `threaded_hash_from` bytes are hashed on a thread of their own.
class FileSink {
public:
    static constexpr std::uint64_t threaded_hash_from = std::uint64_t{4} << 20;

    /// With a `root`, `final_path` must lie under it (confine()): each directory between
    /// is opened beneath root without following a symbolic link (openat2 RESOLVE_BENEATH |
    /// RESOLVE_NO_SYMLINKS), created when missing, and the temporary and final names are
    /// used only through that directory's descriptor, so no symlink placed under root
    /// (before or during the transfer) leads a write outside it. Throws hetcast::Error.
    explicit FileSink(std::filesystem::path final_path, std::uint64_t expected_size = 0,
                      const std::filesystem::path& root = {});
    /// In `dir`, final_path's directory already opened as confined_directory() opens it
    /// (many files of one directory: it is walked to once).
    FileSink(std::filesystem::path final_path, std::uint64_t expected_size, std::shared_ptr<int> dir);
    ~FileSink();
    FileSink(const FileSink&) = delete;
    FileSink& operator=(const FileSink&) = delete;

    /// Throws hetcast::Error on a write failure (a full disk says so).
    void write(std::vector<std::byte> chunk);
    void write(std::span<const std::byte> data);
    /// Replaces bytes already written (a piece fetched again); verify() then reads the
    /// file back instead of trusting the running hash. Throws hetcast::Error.
    void rewrite(std::uint64_t offset, std::span<const std::byte> data);
    /// Keeps the first `offset` bytes written (a copy resumed after its sender failed: the
    /// pieces it had verified) and drops the rest; writes go on from there. verify() then
    /// reads the file back. Throws hetcast::Error.
    void resume_at(std::uint64_t offset);
    /// The temporary file's descriptor, for reading back what was written (pread).
    [[nodiscard]] std::shared_ptr<const int> descriptor() const { return fd_; }
    /// Throws hetcast::Error when the checksum differs; nothing can land then.
    void verify(const net::Digest& expected);
    /// The verified bytes, readable whether or not the file has landed yet.
    [[nodiscard]] std::shared_ptr<const net::MessageBody> body() const;
    /// The permission bits the file lands with (default 0644): only the rwx bits of
    /// `mode` are kept (never set-uid, set-gid or sticky), and those of `umask` cleared.
    void set_mode(unsigned mode, unsigned umask);
    /// The modification time the file lands with (nanoseconds since the epoch); without
    /// it, the landing time.
    void set_mtime(std::int64_t ns) { mtime_ = ns; }
    /// The owner the file lands with (only a process allowed to chown gets it).
    void set_owner(std::uint32_t uid, std::uint32_t gid) { owner_ = {uid, gid}; }
    /// After verify(): set the owner, mode and mtime, fsync, rename into place, fsync the
    /// directory. Without `sync`, neither fsync: the caller has made the bytes durable
    /// (syncfs for many files at once) and fsyncs the directory. Throws hetcast::Error.
    void land(bool sync = true);
    /// verify() then land().
    void commit(const net::Digest& expected);
    [[nodiscard]] std::uint64_t written() const { return written_; }
    [[nodiscard]] const std::filesystem::path& temp_path() const { return temp_; }
    [[nodiscard]] const std::filesystem::path& final_path() const { return final_; }

private:
    void create_temp();
    void write_all(std::span<const std::byte> data);
    void advance(std::size_t n);

    std::filesystem::path final_;
    std::filesystem::path temp_;
    std::shared_ptr<int> dir_;  ///< the directory both names live in
    std::shared_ptr<int> fd_;  // closed when the last reader of body() is done
    unsigned mode_ = 0644;
    std::optional<std::int64_t> mtime_;
    std::optional<std::pair<std::uint32_t, std::uint32_t>> owner_;
    ChunkHasher hash_;
    std::uint64_t written_ = 0;
    std::uint64_t flushed_ = 0;  ///< written back up to here (started, not waited for)
    std::optional<net::Digest> verified_;
    bool landed_ = false;
    bool rewritten_ = false;
};

/// Reads bytes [0, size) of an open file with pread (each reader keeps its own position,
/// so many share one descriptor).
class DescriptorReader final : public net::MessageBody::Reader {
public:
    DescriptorReader(std::shared_ptr<const int> fd, std::uint64_t size, std::filesystem::path name)
        : fd_(std::move(fd)), size_(size), name_(std::move(name)) {}
    std::size_t read(std::span<std::byte> out) override;
    void skip(std::size_t n) override;

private:
    std::shared_ptr<const int> fd_;
    std::uint64_t size_;
    std::filesystem::path name_;
    std::uint64_t pos_ = 0;
};

/// An open descriptor of `path` for reading, closed with the last owner. Throws hetcast::Error.
[[nodiscard]] std::shared_ptr<const int> open_for_reading(const std::filesystem::path& path);

/// SHA-256 of a whole file, read in chunks. Throws hetcast::Error when unreadable.
[[nodiscard]] net::Digest file_sha256(const std::filesystem::path& file);

}  // namespace hetcast
