// Network files (model/loader.hpp parse_network). A network it accepts in the parametric
// form must format (format_network) to YAML that parses again.
#include <optional>

#include "fuzz.hpp"
#include "hetcast/model/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::optional<hetcast::Network> net;
    if (!fuzz::accepts([&] { net.emplace(hetcast::parse_network(fuzz::text(data, size), "fuzz")); })) return 0;
    std::string yaml;
    if (!fuzz::accepts([&] { yaml = hetcast::format_network(*net, "2024-01-01T00:00:00Z"); })) return 0;  // cost matrices
    if (!fuzz::accepts([&] { (void)hetcast::parse_network(yaml, "formatted"); })) {
        fuzz::finding("format_network wrote YAML that parse_network rejects:\n" + yaml.substr(0, 2000));
    }
    return 0;
}
