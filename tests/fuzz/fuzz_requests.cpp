// What the daemon reads out of requests and answers with pure functions: the member lists
// of join / set_members answers (members_from_json), ping samples (samples_from_json) and
// the execution model of a push (parse_exec_model). The rest of request handling acts on a
// live Peer (no pure reader to fuzz); a push's "pattern" text is fuzz_pattern's.
#include "fuzz.hpp"
#include "hetcast/runtime/membership.hpp"
#include "hetcast/sim/exec_model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    nlohmann::json j;
    if (!fuzz::parse_json(data, size, j)) return 0;
    std::vector<hetcast::Member> members;
    if (fuzz::accepts([&] { members = hetcast::members_from_json(j); })) {
        if (hetcast::members_from_json(hetcast::members_to_json(members)).size() != members.size()) {
            fuzz::finding("members change through members_to_json and back");
        }
    }
    fuzz::accepts([&] { (void)hetcast::samples_from_json(j); });
    if (j.is_object()) {
        if (const auto it = j.find("members"); it != j.end()) fuzz::accepts([&] { (void)hetcast::members_from_json(*it); });
        if (const auto it = j.find("samples"); it != j.end()) fuzz::accepts([&] { (void)hetcast::samples_from_json(*it); });
        if (const auto it = j.find("model"); it != j.end() && it->is_string()) {
            fuzz::accepts([&] { (void)hetcast::parse_exec_model(it->get<std::string>()); });
        }
    }
    return 0;
}
