#include "hetcast/runtime/body.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "hetcast/error.hpp"
#include "hetcast/runtime/files.hpp"

namespace hetcast {
namespace {

class SpanReader final : public net::MessageBody::Reader {
public:
    explicit SpanReader(std::shared_ptr<const std::vector<std::byte>> b) : bytes_(std::move(b)) {}
    std::size_t read(std::span<std::byte> out) override {
        const std::size_t n = std::min(out.size(), bytes_->size() - pos_);
        std::memcpy(out.data(), bytes_->data() + pos_, n);
        pos_ += n;
        return n;
    }

private:
    std::shared_ptr<const std::vector<std::byte>> bytes_;
    std::size_t pos_ = 0;
};

/// The k-th output (from 0) of splitmix64 seeded with `seed`.
std::uint64_t splitmix_word(std::uint64_t seed, std::uint64_t k) {
    std::uint64_t z = seed + (k + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

class GeneratedReader final : public net::MessageBody::Reader {
public:
    GeneratedReader(std::uint64_t size, std::uint64_t seed) : size_(size), seed_(seed) {}
    std::size_t read(std::span<std::byte> out) override {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), size_ - pos_));
        GeneratedBody::generate(seed_, pos_, out.first(n));
        pos_ += n;
        return n;
    }
    void skip(std::size_t n) override { pos_ = std::min<std::uint64_t>(size_, pos_ + n); }

private:
    std::uint64_t size_;
    std::uint64_t seed_;
    std::uint64_t pos_ = 0;
};

}  // namespace

void GeneratedBody::generate(std::uint64_t seed, std::uint64_t offset, std::span<std::byte> out) {
    std::size_t done = 0;
    std::uint64_t k = offset / 8;
    auto skip = static_cast<std::size_t>(offset % 8);  // of word k, already before `out`
    while (done < out.size()) {
        const std::uint64_t w = splitmix_word(seed, k++);
        std::array<std::byte, 8> le;
        for (std::size_t b = 0; b < 8; ++b) le[b] = static_cast<std::byte>(w >> (8 * b));
        const std::size_t n = std::min<std::size_t>(8 - skip, out.size() - done);
        std::memcpy(out.data() + done, le.data() + skip, n);
        done += n;
        skip = 0;
    }
}

net::Digest GeneratedBody::sha256() const {
    std::call_once(sha_once_, [this] {
        net::Sha256 h;
        std::vector<std::byte> buf(std::size_t{1} << 20);
        for (std::uint64_t at = 0; at < size_; at += buf.size()) {
            const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size_ - at));
            generate(seed_, at, std::span(buf).first(n));
            h.update(std::span(buf).first(n));
        }
        sha_ = h.finish();
    });
    return sha_;
}

std::unique_ptr<net::MessageBody::Reader> GeneratedBody::open() const {
    return std::make_unique<GeneratedReader>(size_, seed_);
}

std::shared_ptr<const net::MessageBody> make_generated_body(std::uint64_t size, std::uint64_t seed) {
    return std::make_shared<GeneratedBody>(size, seed);
}

BufferBody::BufferBody(std::shared_ptr<const std::vector<std::byte>> bytes) : bytes_(std::move(bytes)) {
    net::Sha256 h;
    h.update(*bytes_);
    sha_ = h.finish();
}

BufferBody::BufferBody(std::shared_ptr<const std::vector<std::byte>> bytes, net::Digest sha)
    : bytes_(std::move(bytes)), sha_(sha) {}

std::unique_ptr<net::MessageBody::Reader> BufferBody::open() const { return std::make_unique<SpanReader>(bytes_); }

FileBody::FileBody(std::filesystem::path path, const std::vector<std::filesystem::path>* serve_roots)
    : path_(std::move(path)) {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO must not block us
    if (fd < 0) {
        const int err = errno;
        throw InputError(path_.string() + (err == ENOENT ? std::string(": no such file") : ": " + std::string(std::strerror(err))));
    }
    fd_ = std::shared_ptr<const int>(new int(fd), [](const int* p) {
        ::close(*p);
        delete p;
    });
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw InputError(path_.string() + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw InputError(path_.string() + ": not a regular file");
    if (serve_roots) served(fd, path_, *serve_roots);
    mode_ = static_cast<unsigned>(st.st_mode) & 0777;
    mtime_ = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    size_ = static_cast<std::uint64_t>(st.st_size);
    try {
        DescriptorReader reader(fd_, size_, path_);
        net::Sha256 sha;
        std::vector<std::byte> buf(std::size_t{1} << 20);
        while (const std::size_t n = reader.read(buf)) sha.update(std::span(buf.data(), n));
        sha_ = sha.finish();
    } catch (const Error& e) {
        throw InputError(e.what());
    }
}

std::unique_ptr<net::MessageBody::Reader> FileBody::open() const {
    return std::make_unique<DescriptorReader>(fd_, size_, path_);
}


namespace {

class SuffixReader final : public net::MessageBody::Reader {
public:
    SuffixReader(std::unique_ptr<net::MessageBody::Reader> inner, std::uint64_t offset)
        : inner_(std::move(inner)), left_(offset) {}
    std::size_t read(std::span<std::byte> out) override {
        if (!pass()) return 0;
        return inner_->read(out);
    }
    bool ready(std::function<void()> wake) override {
        while (true) {
            if (!inner_->ready(wake)) return false;
            if (left_ == 0) return true;
            if (!pass()) return true;  // the inner body ended early: read() says so
        }
    }

private:
    /// Reads past what is ready of the prefix; false when the inner body ended before it.
    bool pass() {
        std::vector<std::byte> scratch;
        while (left_ > 0) {
            scratch.resize(static_cast<std::size_t>(std::min<std::uint64_t>(left_, std::uint64_t{1} << 20)));
            const std::size_t n = inner_->read(scratch);
            if (n == 0) return false;
            left_ -= n;
            if (left_ > 0 && !inner_->ready([] {})) return true;  // the rest of the prefix is not in yet
        }
        return true;
    }
    std::unique_ptr<net::MessageBody::Reader> inner_;
    std::uint64_t left_;
};

class SuffixBody final : public net::MessageBody {
public:
    SuffixBody(std::shared_ptr<const net::MessageBody> inner, std::uint64_t offset)
        : inner_(std::move(inner)), offset_(offset) {}
    std::uint64_t size() const override { return inner_->size() - offset_; }
    net::Digest sha256() const override { return inner_->sha256(); }
    std::unique_ptr<Reader> open() const override { return std::make_unique<SuffixReader>(inner_->open(), offset_); }

private:
    std::shared_ptr<const net::MessageBody> inner_;
    std::uint64_t offset_;
};

class ModeBody final : public net::MessageBody {
public:
    ModeBody(std::shared_ptr<const net::MessageBody> inner, unsigned mode) : inner_(std::move(inner)), mode_(mode) {}
    std::uint64_t size() const override { return inner_->size(); }
    net::Digest sha256() const override { return inner_->sha256(); }
    std::unique_ptr<Reader> open() const override { return inner_->open(); }
    unsigned mode() const { return mode_; }

private:
    std::shared_ptr<const net::MessageBody> inner_;
    unsigned mode_;
};

}  // namespace

std::shared_ptr<const net::MessageBody> with_mode(std::shared_ptr<const net::MessageBody> inner, unsigned mode) {
    return std::make_shared<ModeBody>(std::move(inner), mode & 0777);
}

unsigned mode_of(const net::MessageBody& body) {
    if (const auto* file = dynamic_cast<const FileBody*>(&body)) return file->mode();
    if (const auto* moded = dynamic_cast<const ModeBody*>(&body)) return moded->mode();
    return 0644;
}

std::shared_ptr<const net::MessageBody> suffix_of(std::shared_ptr<const net::MessageBody> body, std::uint64_t offset) {
    if (offset > body->size()) throw InputError("a suffix past the end of the message");
    if (offset == 0) return body;
    return std::make_shared<SuffixBody>(std::move(body), offset);
}

}  // namespace hetcast
