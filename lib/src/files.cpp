#include "hetcast/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <string>
#include <system_error>

#include "hetcast/error.hpp"

namespace hetcast {

namespace fs = std::filesystem;

void write_file_atomically(const fs::path& file, std::string_view text, unsigned mode, bool replace) {
    const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
    std::random_device rd;
    const fs::path temp = dir / ("." + file.filename().string() + ".tmp-" + std::to_string(::getpid()) +
                                 "-" + std::to_string(rd()));
    const auto failed = [&](const std::string& what, int err) {
        return Error("cannot write " + file.string() + ": " + what + ": " +
                     std::generic_category().message(err));
    };
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, static_cast<mode_t>(mode));
    if (fd < 0) throw failed("create " + temp.string(), errno);
    const auto discard = [&] {
        std::error_code ignored;
        fs::remove(temp, ignored);
    };
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            discard();
            throw failed("write", err);
        }
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) {
        const int err = errno;
        ::close(fd);
        discard();
        throw failed("fsync", err);
    }
    if (::close(fd) != 0) {
        const int err = errno;
        discard();
        throw failed("close", err);
    }
    if (replace ? ::rename(temp.c_str(), file.c_str()) != 0 : ::link(temp.c_str(), file.c_str()) != 0) {
        const int err = errno;
        discard();
        throw failed(replace ? "rename" : "link", err);
    }
    if (!replace) discard();
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
    }
}

}  // namespace hetcast
