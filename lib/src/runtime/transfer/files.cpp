#include "hetcast/runtime/files.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <vector>

#include "hetcast/error.hpp"

namespace hetcast {
namespace fs = std::filesystem;

fs::path confine(const fs::path& root, std::string_view relative) {
    const auto refuse = [&] {
        return InputError("destination path '" + std::string(relative) + "' leaves the destination root");
    };
    if (relative.empty() || relative.find('\0') != std::string_view::npos) throw refuse();
    const fs::path rel(relative);
    if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory()) throw refuse();
    for (const auto& part : rel) {
        if (part == "..") throw refuse();
    }
    const fs::path norm = rel.lexically_normal();
    if (norm.empty() || norm == "." || !norm.has_filename()) throw refuse();
    const fs::path full = root / norm;
    check_path_limits(full.native(), "destination path");
    return full;
}

void check_path_limits(std::string_view path, std::string_view what) {
    // Quoted in part: the line stays readable whatever its length.
    const auto shown = [](std::string_view s) {
        return s.size() <= 60 ? std::string(s) : std::string(s.substr(0, 28)) + "..." + std::string(s.substr(s.size() - 28));
    };
    if (path.size() > path_max - 1) {
        throw InputError(std::string(what) + " '" + shown(path) + "' has " + std::to_string(path.size()) +
                         " bytes, over PATH_MAX (" + std::to_string(path_max) + " with its NUL)");
    }
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t end = std::min(path.find('/', start), path.size());
        if (end - start > name_max) {
            throw InputError(std::string(what) + " '" + shown(path) + "' has a name of " + std::to_string(end - start) +
                             " bytes ('" + shown(path.substr(start, end - start)) + "'), over NAME_MAX (" +
                             std::to_string(name_max) + ")");
        }
        start = end + 1;
    }
}

namespace {

InputError not_served(const fs::path& file, const std::vector<fs::path>& roots, const std::string& why) {
    std::string listed;
    for (const auto& r : roots) listed += (listed.empty() ? "" : ", ") + r.string();
    return InputError("'" + file.string() + "' " + why + " (serve_roots: " +
                      (listed.empty() ? "none; the daemon serves no files until serve_roots lists their folders" : listed) +
                      ")");
}

/// Whether the resolved path `real` lies strictly under one of `roots` (resolved too).
bool under(const fs::path& real, const std::vector<fs::path>& roots) {
    std::error_code ec;
    for (const auto& root : roots) {
        const fs::path base = fs::canonical(root, ec);
        if (ec) continue;
        const auto [r, f] = std::mismatch(base.begin(), base.end(), real.begin(), real.end());
        if (r == base.end() && f != real.end()) return true;
    }
    return false;
}

}  // namespace

fs::path served(const fs::path& file, const std::vector<fs::path>& roots) {
    if (!file.is_absolute()) throw not_served(file, roots, "is not an absolute path");
    std::error_code ec;
    const fs::path real = fs::canonical(file, ec);
    if (ec) throw InputError("'" + file.string() + "': " + ec.message());
    if (!under(real, roots)) throw not_served(file, roots, "is outside the folders this daemon serves");
    return real;
}

void served(int fd, const fs::path& file, const std::vector<fs::path>& roots) {
    // What the descriptor really opened: no symlink swapped in after a check can change it.
    std::error_code ec;
    const fs::path real = fs::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
    if (ec || !real.is_absolute()) throw InputError("'" + file.string() + "': cannot tell where it is");
    if (!under(real, roots)) throw not_served(file, roots, "is outside the folders this daemon serves");
}

namespace {

std::string errno_text() { return std::strerror(errno); }

/// A verified received file, read through its descriptor, so a relay forwards it while it
/// is being fsynced and renamed.
class DescriptorBody final : public net::MessageBody {
public:
    DescriptorBody(std::shared_ptr<int> fd, std::filesystem::path name, std::uint64_t size, net::Digest sha)
        : fd_(std::move(fd)), name_(std::move(name)), size_(size), sha_(sha) {}
    std::uint64_t size() const override { return size_; }
    net::Digest sha256() const override { return sha_; }
    std::unique_ptr<Reader> open() const override { return std::make_unique<DescriptorReader>(fd_, size_, name_); }

private:

    std::shared_ptr<int> fd_;
    std::filesystem::path name_;
    std::uint64_t size_;
    net::Digest sha_;
};

}  // namespace

std::size_t DescriptorReader::read(std::span<std::byte> out) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), size_ - pos_));
    std::size_t got = 0;
    while (got < want) {
        const ssize_t n = ::pread(*fd_, out.data() + got, want - got, static_cast<off_t>(pos_ + got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw Error("cannot read " + name_.string() + ": " + (n < 0 ? errno_text() : "the file is shorter"));
        got += static_cast<std::size_t>(n);
    }
    pos_ += got;
    return got;
}

void DescriptorReader::skip(std::size_t n) { pos_ = std::min<std::uint64_t>(size_, pos_ + n); }

std::shared_ptr<const int> open_for_reading(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error("cannot read " + path.string() + ": " + errno_text());
    return std::shared_ptr<const int>(new int(fd), [](const int* p) {
        ::close(*p);
        delete p;
    });
}

ChunkHasher::ChunkHasher(bool threaded, std::size_t max_queued) : max_queued_(max_queued) {
    if (threaded) worker_ = std::thread([this] { run(); });
}

ChunkHasher::~ChunkHasher() {
    {
        std::lock_guard lock(mu_);
        closed_ = true;
    }
    cv_.notify_all();
    if (worker_.joinable()) worker_.join();
}

void ChunkHasher::add(std::vector<std::byte> chunk) {
    if (!worker_.joinable()) {
        sha_.update(chunk);
        return;
    }
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return queued_ < max_queued_; });
    queued_ += chunk.size();
    queue_.push_back(std::move(chunk));
    cv_.notify_all();
}

void ChunkHasher::add(std::span<const std::byte> data) {
    if (!worker_.joinable()) {
        sha_.update(data);
        return;
    }
    add(std::vector<std::byte>(data.begin(), data.end()));
}

void ChunkHasher::run() {
    std::unique_lock lock(mu_);
    while (true) {
        cv_.wait(lock, [&] { return closed_ || !queue_.empty(); });
        if (queue_.empty()) return;
        std::vector<std::byte> chunk = std::move(queue_.front());
        queue_.pop_front();
        lock.unlock();
        sha_.update(chunk);
        lock.lock();
        queued_ -= chunk.size();
        cv_.notify_all();
    }
}

net::Digest ChunkHasher::finish() {
    if (worker_.joinable()) {
        {
            std::lock_guard lock(mu_);
            closed_ = true;
        }
        cv_.notify_all();
        worker_.join();
    }
    return sha_.finish();
}

std::string temp_name(const std::string& filename, std::uint64_t tag) {
    const std::string tail = ".hetcast-" + std::to_string(tag) + ".part";
    // NAME_MAX (255 bytes) on every common file system: a long name is shortened, never the
    // tag remove_leftovers() recognises it by.
    const std::size_t room = name_max - 1 - tail.size();
    return "." + filename.substr(0, room) + tail;
}

namespace {

std::shared_ptr<int> own_fd(int fd) {
    return std::shared_ptr<int>(new int(fd), [](int* p) {
        ::close(*p);
        delete p;
    });
}

/// Opens directory `name` in `dir` without following a symlink, and never above `dir`.
int open_beneath(int dir, const std::string& name) {
    open_how how{};
    how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
    const long fd = ::syscall(SYS_openat2, dir, name.c_str(), &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
    // Kernels before 5.6: one component at a time, no symlink followed.
    return ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
}

}  // namespace

timespec to_timespec(std::int64_t ns) {
    std::int64_t s = ns / 1'000'000'000, rest = ns % 1'000'000'000;
    if (rest < 0) {  // before 1970: tv_nsec stays in [0, 1e9)
        --s;
        rest += 1'000'000'000;
    }
    return {static_cast<time_t>(s), static_cast<long>(rest)};
}

std::shared_ptr<int> confined_directory(const fs::path& root, const fs::path& rel) {
    std::error_code ec;
    fs::create_directories(root, ec);  // the root itself is the operator's: made if missing
    const int top = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (top < 0) throw Error("cannot open the destination root " + root.string() + ": " + errno_text());
    auto dir = own_fd(top);
    fs::path at = root;
    for (const auto& part : rel) {
        const std::string name = part.string();
        if (name.empty() || name == ".") continue;
        at /= part;
        if (::mkdirat(*dir, name.c_str(), 0755) != 0 && errno != EEXIST) {
            const std::string why = errno_text();
            throw Error("cannot create " + at.string() + ": " + why);
        }
        const int next = open_beneath(*dir, name);
        if (next < 0) {
            const int err = errno;
            throw Error("cannot open " + at.string() + ": " +
                        (err == ELOOP || err == EXDEV ? std::string("a symbolic link (refused: it could lead out of the root)")
                                                      : std::string(std::strerror(err))));
        }
        dir = own_fd(next);
    }
    return dir;
}

std::uint64_t temp_tag() {
    thread_local std::mt19937_64 rng(std::random_device{}());
    return rng();
}

FileSink::FileSink(fs::path final_path, std::uint64_t expected_size, const fs::path& root)
    : final_(std::move(final_path)), hash_(expected_size >= threaded_hash_from) {
    const std::string tmp = temp_name(final_.filename().string(), temp_tag());
    temp_ = final_.parent_path() / tmp;
    if (root.empty()) {
        std::error_code ec;
        fs::create_directories(final_.parent_path(), ec);
        const int d = ::open(final_.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (d < 0) {
            const std::string why = errno_text();
            throw Error("cannot create " + temp_.string() + ": " + why);
        }
        dir_ = own_fd(d);
    } else {
        dir_ = confined_directory(root, final_.parent_path().lexically_relative(root));
    }
    create_temp();
}

FileSink::FileSink(fs::path final_path, std::uint64_t expected_size, std::shared_ptr<int> dir)
    : final_(std::move(final_path)), temp_(final_.parent_path() / temp_name(final_.filename().string(), temp_tag())),
      dir_(std::move(dir)), hash_(expected_size >= threaded_hash_from) {
    create_temp();
}

void FileSink::create_temp() {
    // Only the owner can read a copy while it arrives; land() sets its mode.
    const int fd = ::openat(*dir_, temp_.filename().c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        const std::string why = errno_text();  // before anything else can touch errno
        throw Error("cannot create " + temp_.string() + ": " + why);
    }
    fd_ = own_fd(fd);
}

FileSink::~FileSink() {
    if (!landed_) ::unlinkat(*dir_, temp_.filename().c_str(), 0);
}

void FileSink::set_mode(unsigned mode, unsigned umask) { mode_ = mode & 0777 & ~umask; }

void FileSink::write_all(std::span<const std::byte> data) {
    while (!data.empty()) {
        const ssize_t n = ::write(*fd_, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw Error("cannot write " + temp_.string() + ": " + (n < 0 ? errno_text() : "no space"));
        data = data.subspan(static_cast<std::size_t>(n));
    }
}

void FileSink::write(std::vector<std::byte> chunk) {
    if (chunk.empty()) return;
    write_all(chunk);
    advance(chunk.size());
    hash_.add(std::move(chunk));
}

void FileSink::write(std::span<const std::byte> data) {
    if (data.empty()) return;
    write_all(data);
    advance(data.size());
    hash_.add(data);
}

void FileSink::advance(std::size_t n) {
    written_ += n;
    // Start writing back what has arrived, so the fsync when the copy lands has little
    // left to do. Only a hint: it neither waits nor fails the write.
    constexpr std::uint64_t step = std::uint64_t{8} << 20;
    if (written_ - flushed_ >= step) {
        ::sync_file_range(*fd_, static_cast<off_t>(flushed_), static_cast<off_t>(written_ - flushed_),
                          SYNC_FILE_RANGE_WRITE);
        flushed_ = written_;
    }
}

void FileSink::rewrite(std::uint64_t offset, std::span<const std::byte> data) {
    if (offset + data.size() > written_) throw Error("a rewrite past what " + temp_.string() + " holds");
    std::size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::pwrite(*fd_, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw Error("cannot write " + temp_.string() + ": " + (n < 0 ? errno_text() : "no space"));
        done += static_cast<std::size_t>(n);
    }
    rewritten_ = true;
}

void FileSink::resume_at(std::uint64_t offset) {
    if (offset > written_) throw Error("cannot resume " + temp_.string() + " past what it holds");
    if (::ftruncate(*fd_, static_cast<off_t>(offset)) != 0 ||
        ::lseek(*fd_, static_cast<off_t>(offset), SEEK_SET) != static_cast<off_t>(offset)) {
        throw Error("cannot resume " + temp_.string() + ": " + errno_text());
    }
    written_ = offset;
    flushed_ = std::min(flushed_, offset);
    rewritten_ = true;  // the running hash saw other bytes: verify() reads the file
}

void FileSink::verify(const net::Digest& expected) {
    if (verified_) return;
    net::Digest got = hash_.finish();
    // The running hash saw the bytes a rewrite replaced: hash what the file holds now.
    if (rewritten_) {
        DescriptorReader reader(fd_, written_, temp_);
        net::Sha256 sha;
        std::vector<std::byte> buf(std::size_t{1} << 20);
        while (const std::size_t n = reader.read(buf)) sha.update(std::span(buf.data(), n));
        got = sha.finish();
    }
    if (!net::same_digest(got, expected)) {
        throw Error("checksum mismatch for " + final_.string() + ": got " + net::to_hex(got) + ", expected " +
                    net::to_hex(expected));
    }
    verified_ = got;
}

std::shared_ptr<const net::MessageBody> FileSink::body() const {
    if (!verified_) throw Error(temp_.string() + " is not verified yet");
    return std::make_shared<DescriptorBody>(fd_, final_, written_, *verified_);
}

void FileSink::land(bool sync) {
    if (!verified_) throw Error(temp_.string() + " is not verified yet");
    if (landed_) return;
    if (owner_ && ::fchown(*fd_, owner_->first, owner_->second) != 0) {
        throw Error("cannot set the owner of " + temp_.string() + ": " + errno_text());
    }
    if (::fchmod(*fd_, mode_) != 0) throw Error("cannot set the mode of " + temp_.string() + ": " + errno_text());
    if (mtime_) {
        const timespec times[2] = {{0, UTIME_OMIT}, to_timespec(*mtime_)};
        if (::futimens(*fd_, times) != 0) throw Error("cannot set the mtime of " + temp_.string() + ": " + errno_text());
    }
    if (sync && ::fsync(*fd_) != 0) throw Error("cannot flush " + temp_.string() + ": " + errno_text());
    // Both names in the one directory descriptor: a symlink at the final name is replaced,
    // never followed.
    if (::renameat(*dir_, temp_.filename().c_str(), *dir_, final_.filename().c_str()) != 0) {
        const std::string why = errno_text();
        throw Error("cannot rename " + temp_.string() + " to " + final_.string() + ": " + why);
    }
    landed_ = true;
    if (sync) ::fsync(*dir_);
}

void FileSink::commit(const net::Digest& expected) {
    verify(expected);
    land();
}

net::Digest file_sha256(const fs::path& file) {
    std::FILE* f = std::fopen(file.c_str(), "rb");
    if (!f) throw Error("cannot read " + file.string() + ": " + errno_text());
    net::Sha256 sha;
    std::vector<std::byte> buf(1 << 20);
    while (const std::size_t n = std::fread(buf.data(), 1, buf.size(), f)) sha.update(std::span(buf.data(), n));
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) throw Error("cannot read " + file.string() + ": read error");
    return sha.finish();
}

}  // namespace hetcast
