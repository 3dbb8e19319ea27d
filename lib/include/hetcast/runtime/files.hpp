#pragma once
/// Where received files go, and how they land: under a destination root, via a temporary
/// name, checked, fsynced, then renamed. Nothing lands under its final name unverified.
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "hetcast/net/auth.hpp"

namespace hetcast {

/// `root / relative`, refusing an empty, absolute or escaping path (any `..` component,
/// or a result outside root). Throws InputError("destination path '...' leaves the
/// destination root") before anything is written.
[[nodiscard]] std::filesystem::path confine(const std::filesystem::path& root, std::string_view relative);

/// Writes a file under a temporary name next to its final path; commit() checks the
/// SHA-256, fsyncs, renames into place and fsyncs the directory. Destroyed without a
/// successful commit, it removes the temporary file.
class FileSink {
public:
    explicit FileSink(std::filesystem::path final_path);
    ~FileSink();
    FileSink(const FileSink&) = delete;
    FileSink& operator=(const FileSink&) = delete;

    /// Throws hetcast::Error on a write failure (a full disk says so).
    void write(std::span<const std::byte> data);
    /// Throws hetcast::Error when the checksum differs (the temporary file is removed).
    void commit(const net::Digest& expected);
    [[nodiscard]] std::uint64_t written() const { return written_; }
    [[nodiscard]] const std::filesystem::path& temp_path() const { return temp_; }
    [[nodiscard]] const std::filesystem::path& final_path() const { return final_; }

private:
    std::filesystem::path final_;
    std::filesystem::path temp_;
    std::FILE* file_ = nullptr;
    net::Sha256 sha_;
    std::uint64_t written_ = 0;
    bool committed_ = false;
};

/// SHA-256 of a whole file, read in chunks. Throws hetcast::Error when unreadable.
[[nodiscard]] net::Digest file_sha256(const std::filesystem::path& file);

}  // namespace hetcast
