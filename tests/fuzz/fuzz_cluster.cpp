// Cluster files (runtime/config.hpp parse_cluster, what load_cluster runs on the text).
#include "fuzz.hpp"
#include "hetcast/runtime/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::accepts([&] { (void)hetcast::parse_cluster(fuzz::text(data, size), "fuzz"); });
    return 0;
}
