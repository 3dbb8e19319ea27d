#include "hetcast/runtime/files.hpp"

#include <fcntl.h>
#include <unistd.h>

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
    return full;
}

namespace {
std::string errno_text() { return std::strerror(errno); }
}  // namespace

FileSink::FileSink(fs::path final_path) : final_(std::move(final_path)) {
    std::random_device rd;
    temp_ = final_.parent_path() / ("." + final_.filename().string() + ".hetcast-" + std::to_string(rd()) + ".part");
    std::error_code ec;
    fs::create_directories(final_.parent_path(), ec);
    file_ = std::fopen(temp_.c_str(), "wbx");
    if (!file_) throw Error("cannot create " + temp_.string() + ": " + errno_text());
}

FileSink::~FileSink() {
    if (file_) std::fclose(file_);
    if (!committed_) {
        std::error_code ec;
        fs::remove(temp_, ec);
    }
}

void FileSink::write(std::span<const std::byte> data) {
    if (data.empty()) return;
    if (std::fwrite(data.data(), 1, data.size(), file_) != data.size()) {
        throw Error("cannot write " + temp_.string() + ": " + errno_text());
    }
    sha_.update(data);
    written_ += data.size();
}

void FileSink::commit(const net::Digest& expected) {
    const net::Digest got = sha_.finish();
    if (!net::same_digest(got, expected)) {
        throw Error("checksum mismatch for " + final_.string() + ": got " + net::to_hex(got) + ", expected " +
                    net::to_hex(expected));
    }
    if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) {
        throw Error("cannot flush " + temp_.string() + ": " + errno_text());
    }
    std::fclose(file_);
    file_ = nullptr;
    std::error_code ec;
    fs::rename(temp_, final_, ec);
    if (ec) throw Error("cannot rename " + temp_.string() + " to " + final_.string() + ": " + ec.message());
    committed_ = true;
    if (const int dir = ::open(final_.parent_path().c_str(), O_RDONLY | O_DIRECTORY); dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
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
