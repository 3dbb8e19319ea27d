// The daemon's configuration (runtime/config.hpp parse_daemon_config, what
// load_daemon_config runs on the file's text).
#include "fuzz.hpp"
#include "hetcast/runtime/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::accepts([&] { (void)hetcast::parse_daemon_config(fuzz::text(data, size), "fuzz", "/etc/hetcast"); });
    return 0;
}
