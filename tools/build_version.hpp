// The version the hetcast and hetcastd binaries print with --version (hetcast_build_version,
// root CMakeLists.txt): the project version, plus the git commit when built from a checkout.
#pragma once

namespace hetcast::build {
/// "0.1.0 (git 4b0b813)", "0.1.0 (git 4b0b813-dirty)", or "0.1.0" outside a git checkout.
const char* version_line();
/// `git describe --always --dirty` of the source tree at build time; empty outside a checkout.
const char* git_describe();
}  // namespace hetcast::build
