#pragma once
#include <filesystem>
#include <string_view>

namespace hetcast {

/// Writes `text` to `file` whole or not at all: a temporary file beside it created with
/// `mode`, fsync, then rename over `file` (or, when not `replace`, a link that fails with
/// "File exists" if `file` is there), then fsync of the folder. Throws Error naming the file
/// and the step, and leaves `file` untouched.
void write_file_atomically(const std::filesystem::path& file, std::string_view text, unsigned mode = 0644,
                           bool replace = true);

}  // namespace hetcast
