# Writes OUTPUT, a C++ file defining hetcast::build::version_line(): "VERSION (git DESCRIBE)"
# when SOURCE_DIR is a git checkout and git is installed, "VERSION" otherwise. Run at every
# build (cmake -P); OUTPUT is rewritten only when its text changes, so an unchanged commit
# recompiles and relinks nothing.
#   cmake -DSOURCE_DIR=... -DOUTPUT=... -DVERSION=... -P git_version.cmake
set(describe "")
if(EXISTS "${SOURCE_DIR}/.git")
  find_program(GIT_EXECUTABLE git)
  if(GIT_EXECUTABLE)
    # --no-optional-locks: --dirty refreshes the index; never take index.lock for that, so a
    # build never makes a concurrent 'git commit' in the same checkout fail.
    execute_process(COMMAND "${GIT_EXECUTABLE}" --no-optional-locks -C "${SOURCE_DIR}" describe --always --dirty
      OUTPUT_VARIABLE describe OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0 OR NOT describe MATCHES "^[-.A-Za-z0-9_]+$")
      set(describe "")
    endif()
  endif()
endif()
if(describe)
  set(line "${VERSION} (git ${describe})")
else()
  set(line "${VERSION}")
endif()
set(text "// Generated at build time by cmake/git_version.cmake; do not edit.
namespace hetcast::build {
const char* version_line() { return \"${line}\"; }
const char* git_describe() { return \"${describe}\"; }
}  // namespace hetcast::build
")
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
