#include "hetcast/model/units.hpp"

#include <charconv>
#include <cmath>
#include <string>
#include <utility>

#include "hetcast/error.hpp"

namespace hetcast {

double parse_bytes(std::string_view text) {
    const auto bad = [&] {
        return InputError("bad byte count '" + std::string(text) + "' (examples: 1048576, 64KiB, 1MiB, 10MB)");
    };
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || !std::isfinite(value) || value < 0) throw bad();
    const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
    static const std::pair<std::string_view, double> units[] = {
        {"", 1},         {"B", 1},         {"KiB", 1024.0},       {"MiB", 1048576.0}, {"GiB", 1073741824.0},
        {"kB", 1e3},     {"KB", 1e3},      {"MB", 1e6},           {"GB", 1e9},        {"K", 1024.0},
        {"M", 1048576.0}, {"G", 1073741824.0},
    };
    for (const auto& [name, factor] : units) {
        if (unit == name) {
            const double bytes = value * factor;
            if (bytes > std::ldexp(1.0, 60)) throw bad();
            return bytes;
        }
    }
    throw bad();
}

double parse_rate(std::string_view text) {
    const auto bad = [&] {
        return InputError("bad rate '" + std::string(text) + "' (examples: 25e6 bytes/s, 200Mbit, 1Gbit/s, 25MB/s)");
    };
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || !std::isfinite(value) || !(value > 0)) throw bad();
    std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
    if (unit.ends_with("/s")) unit.remove_suffix(2);
    static const std::pair<std::string_view, double> units[] = {
        {"", 1},          {"B", 1},          {"bit", 0.125},     {"kbit", 125.0},    {"Kbit", 125.0},
        {"Mbit", 125e3},  {"Gbit", 125e6},   {"kB", 1e3},        {"KB", 1e3},        {"MB", 1e6},
        {"GB", 1e9},      {"KiB", 1024.0},   {"MiB", 1048576.0}, {"GiB", 1073741824.0},
    };
    for (const auto& [name, factor] : units) {
        if (unit == name) return value * factor;
    }
    throw bad();
}

}  // namespace hetcast
