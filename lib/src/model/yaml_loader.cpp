#include "hetcast/model/loader.hpp"

#include "hetcast/error.hpp"

namespace hetcast {

Network parse_network(std::string_view, std::string_view) { throw Error("parse_network: not implemented yet"); }
Network load_network(const std::filesystem::path&) { throw Error("load_network: not implemented yet"); }

}  // namespace hetcast
