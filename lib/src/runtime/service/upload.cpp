#include "hetcast/runtime/upload.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <random>

#include <nlohmann/json.hpp>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/pieces.hpp"
#include "hetcast/runtime/peer.hpp"
#include "hetcast/runtime/pieces.hpp"

namespace hetcast {
namespace fs = std::filesystem;
using json = nlohmann::json;

json to_json(const UploadSpec& u) {
    json pieces = json::array();
    for (const auto& d : u.pieces) pieces.push_back(net::to_hex(d));
    return {{"size", u.size}, {"sha256", net::to_hex(u.sha)}, {"piece", u.piece},
            {"pieces", std::move(pieces)}, {"mode", u.mode}, {"mtime", u.mtime}};
}

UploadSpec upload_from_json(const json& j) {
    if (!j.is_object()) throw InputError("push: 'upload' must be an object");
    UploadSpec u;
    try {
        u.size = j.at("size").get<std::uint64_t>();
        u.sha = digest_from_hex(j.at("sha256").get<std::string>());
        u.piece = j.at("piece").get<std::uint64_t>();
        for (const json& d : j.at("pieces")) u.pieces.push_back(digest_from_hex(d.get<std::string>()));
        u.mode = j.value("mode", 0644u) & 07777u;
        u.mtime = j.value("mtime", std::int64_t{0});
    } catch (const json::exception& e) {
        throw InputError(std::string("push: a bad 'upload': ") + e.what());
    }
    if (u.piece < min_piece || u.piece > max_piece) throw InputError("push: an upload's pieces must be 4 KiB to 8 MiB");
    if (u.pieces.size() != piece_count(u.size, u.piece)) {
        throw InputError("push: an upload of " + std::to_string(u.size) + " bytes in pieces of " + std::to_string(u.piece) +
                         " needs " + std::to_string(piece_count(u.size, u.piece)) + " digests, not " +
                         std::to_string(u.pieces.size()));
    }
    if (u.pieces.size() > max_upload_pieces) {
        throw InputError("push: an upload in " + std::to_string(u.pieces.size()) + " pieces, over the " +
                         std::to_string(max_upload_pieces) + " its plan carries the digests of: a larger --piece");
    }
    return u;
}

namespace {

class LocalFileBody final : public net::MessageBody {
public:
    LocalFileBody(std::shared_ptr<const int> fd, std::uint64_t size, net::Digest sha, fs::path path)
        : fd_(std::move(fd)), size_(size), sha_(sha), path_(std::move(path)) {}
    std::uint64_t size() const override { return size_; }
    net::Digest sha256() const override { return sha_; }
    std::unique_ptr<Reader> open() const override { return std::make_unique<DescriptorReader>(fd_, size_, path_); }

private:
    std::shared_ptr<const int> fd_;
    std::uint64_t size_;
    net::Digest sha_;
    fs::path path_;
};

std::shared_ptr<const int> own(int fd) {
    return std::shared_ptr<const int>(new int(fd), [](const int* p) {
        ::close(*p);
        delete p;
    });
}

}  // namespace

LocalFile describe_local_file(const fs::path& file, std::uint64_t piece) {
    const int raw = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (raw < 0) {
        const int err = errno;
        throw InputError("'" + file.string() + "': " + (err == ENOENT ? std::string("no such file") : std::strerror(err)));
    }
    const auto fd = own(raw);
    struct stat st {};
    if (::fstat(raw, &st) != 0) throw InputError("'" + file.string() + "': " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw InputError("'" + file.string() + "' is not a regular file");
    LocalFile out;
    UploadSpec& u = out.spec;
    u.size = static_cast<std::uint64_t>(st.st_size);
    u.piece = piece;
    u.mode = static_cast<unsigned>(st.st_mode) & 0777;
    u.mtime = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    // One read gives the whole file's digest and each piece's.
    try {
        DescriptorReader reader(fd, u.size, file);
        net::Sha256 whole;
        std::optional<net::Sha256> part;
        std::uint64_t in_piece = 0;
        std::vector<std::byte> buf(std::size_t{1} << 20);
        while (const std::size_t n = reader.read(buf)) {
            const std::span<const std::byte> data(buf.data(), n);
            whole.update(data);
            for (std::size_t at = 0; at < n;) {
                if (!part) part.emplace();
                const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(n - at, piece - in_piece));
                part->update(data.subspan(at, take));
                at += take;
                in_piece += take;
                if (in_piece == piece) {
                    u.pieces.push_back(part->finish());
                    part.reset();
                    in_piece = 0;
                }
            }
        }
        if (part) u.pieces.push_back(part->finish());
        u.sha = whole.finish();
    } catch (const Error& e) {
        throw InputError(e.what());
    }
    if (u.pieces.size() != piece_count(u.size, piece)) throw InputError("'" + file.string() + "' changed while it was read");
    out.body = std::make_shared<LocalFileBody>(fd, u.size, u.sha, file);
    return out;
}

LocalFile describe_local_tree(const std::vector<std::string>& args, const TreeOptions& options,
                              const std::function<std::uint64_t(std::uint64_t size)>& piece) {
    auto body = std::make_shared<TreeBody>(build_tree(args, options), nullptr);
    LocalFile out;
    UploadSpec& u = out.spec;
    u.size = body->size();
    u.sha = body->sha256();
    u.piece = piece(u.size);
    if (u.piece == 0) throw InputError("the files add up to " + std::to_string(u.size) + " bytes: too large to push");
    try {
        u.pieces = piece_digests(*body, u.piece);
    } catch (const Error& e) {
        throw InputError(e.what());
    }
    u.mode = 0755;
    out.tree = body->entries();
    out.body = std::move(body);
    return out;
}

struct Upload::Core {
    UploadSpec spec;
    std::string operator_name;
    std::chrono::milliseconds stall;
    std::optional<Landing> landing;
    std::unique_ptr<FileSink> sink;   // this member's own copy, or
    std::shared_ptr<const int> temp;  // the unlinked temporary file
    std::shared_ptr<PieceTracker> tracker;

    std::mutex mu;
    std::condition_variable cv;
    const net::Connection* conn = nullptr;  // compared only, never used: the operator's connection
    std::uint64_t received = 0;
    std::uint64_t flushed = 0;  // of the temporary file: written back up to here (started)
    bool ended = false;
    bool stopping = false;
    std::optional<std::string> failed;
    std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();

    void fail_locked(const std::string& why) {
        if (ended || failed) return;
        failed = why;
        tracker->fail(why);
        cv.notify_all();
    }

    void write(std::span<const std::byte> data) {
        if (sink) return sink->write(data);
        std::uint64_t at = received;
        while (!data.empty()) {
            const ssize_t n = ::pwrite(*temp, data.data(), data.size(), static_cast<off_t>(at));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) throw Error(std::string("writing the upload's temporary file: ") + std::strerror(errno));
            data = data.subspan(static_cast<std::size_t>(n));
            at += static_cast<std::uint64_t>(n);
        }
        // As FileSink does: dirty pages written back as they come, not all at once when
        // the kernel throttles this (the I/O) thread.
        constexpr std::uint64_t step = std::uint64_t{8} << 20;
        if (at - flushed >= step) {
            ::sync_file_range(*temp, static_cast<off_t>(flushed), static_cast<off_t>(at - flushed), SYNC_FILE_RANGE_WRITE);
            flushed = at;
        }
    }

    void on_frame(const net::ConnectionPtr& c, net::Frame&& f) {
        std::lock_guard lock(mu);
        if (stopping || failed || ended) return;
        // The id is said only to the operator who asked, on its connection; anyone else's
        // frames of it are not this upload's.
        if (c->peer() != operator_name || (conn && conn != c.get())) return;
        conn = c.get();
        last = std::chrono::steady_clock::now();
        if (f.header.type == net::FrameType::data_end) {
            if (received != spec.size) {
                return fail_locked("the upload ended after " + std::to_string(received) + " of " +
                                   std::to_string(spec.size) + " bytes");
            }
            if (f.payload.size() != spec.sha.size() || !std::equal(f.payload.begin(), f.payload.end(), spec.sha.begin())) {
                return fail_locked("the upload's SHA-256 is not the one announced");
            }
            ended = true;
            cv.notify_all();
            return;
        }
        if (received + f.payload.size() > spec.size) {
            return fail_locked("the upload sent more than its " + std::to_string(spec.size) + " bytes");
        }
        try {
            write(f.payload);
            received += f.payload.size();
            const auto bad = tracker->add(f.payload);
            if (!bad.empty()) {
                fail_locked("piece " + std::to_string(bad.front()) +
                            " of the upload does not match its SHA-256 (did the file change while it was sent?)");
            }
        } catch (const std::exception& e) {
            fail_locked(e.what());
        }
    }

    void on_closed(const net::Connection* c, const std::string& why) {
        std::lock_guard lock(mu);
        if (c != conn) return;
        fail_locked("the operator's connection closed before the upload was in (" + why + ")");
    }

    void watch() {
        std::unique_lock lock(mu);
        while (!stopping) {
            cv.wait_for(lock, std::chrono::milliseconds(100));
            if (stopping || ended || failed || stall.count() <= 0) continue;
            if (std::chrono::steady_clock::now() - last > stall) {
                fail_locked("nothing of the upload came for " + std::to_string(stall.count() / 1000) + " s");
            }
        }
    }
};

Upload::Upload(Peer& peer, UploadSpec spec, std::string operator_name, std::chrono::milliseconds stall,
               const fs::path& temp_dir, std::optional<Landing> landing)
    : peer_(peer), core_(std::make_shared<Core>()) {
    Core& k = *core_;
    k.spec = std::move(spec);
    k.operator_name = std::move(operator_name);
    k.stall = stall;
    k.landing = std::move(landing);
    std::shared_ptr<const int> fd;
    if (k.landing && k.landing->tree.empty()) {
        k.sink = std::make_unique<FileSink>(confine(k.landing->root, k.landing->name), k.spec.size, k.landing->root);
        fd = k.sink->descriptor();
    } else {
        std::error_code ec;
        fs::create_directories(temp_dir, ec);
        std::string name = (temp_dir / "hetcast-upload.XXXXXX").string();
        const int raw = ::mkostemp(name.data(), O_CLOEXEC);
        if (raw < 0) throw Error("cannot make the upload's temporary file in " + temp_dir.string() + ": " + std::strerror(errno));
        ::unlink(name.c_str());  // nameless from now on: nothing to remove, whatever happens
        k.temp = own(raw);
        fd = k.temp;
    }
    k.tracker = std::make_shared<PieceTracker>(k.spec.size, k.spec.piece, k.spec.pieces, fd);
    body_ = with_mode(k.tracker->body(k.spec.sha), k.spec.mode);
    {
        static std::mutex rng_mu;
        static std::mt19937_64 rng{std::random_device{}()};
        std::lock_guard lock(rng_mu);
        id_ = rng() >> 1;
    }
    peer_.accept_stream(id_, {[core = core_](const net::ConnectionPtr& c, net::Frame&& f) { core->on_frame(c, std::move(f)); },
                              [core = core_](const net::Connection* c, const std::string& why) { core->on_closed(c, why); }});
    watcher_ = std::thread([core = core_] { core->watch(); });
}

Upload::~Upload() {
    peer_.end_stream(id_);
    {
        std::lock_guard lock(core_->mu);
        core_->fail_locked("the push ended");
        core_->stopping = true;
    }
    core_->cv.notify_all();
    watcher_.join();
}

void Upload::fail(const std::string& why) {
    std::lock_guard lock(core_->mu);
    core_->fail_locked(why);
}

std::optional<std::string> Upload::failure() const {
    std::lock_guard lock(core_->mu);
    return core_->failed;
}

std::optional<std::string> Upload::finish() {
    Core& k = *core_;
    {
        std::unique_lock lock(k.mu);
        k.cv.wait(lock, [&] { return k.ended || k.failed.has_value(); });
        if (k.failed) return k.failed;
    }
    if (!k.landing) return std::nullopt;
    try {
        if (!k.landing->tree.empty()) {
            const auto failed = land_tree(k.landing->root, k.landing->name, k.landing->tree, *k.temp,
                                          LandOptions{k.landing->preserve, k.landing->umask, k.landing->owner});
            if (!failed.empty()) return land_failures_text(failed, k.landing->tree.size());
            return std::nullopt;
        }
        k.sink->verify(k.spec.sha);
        k.sink->set_mode(k.spec.mode, k.landing->preserve ? 0 : k.landing->umask);
        if (k.landing->preserve) k.sink->set_mtime(k.spec.mtime);
        k.sink->land();
    } catch (const std::exception& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

}  // namespace hetcast
