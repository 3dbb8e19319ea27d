// A job_plan frame's payload (runtime/job.hpp): JSON, then job_plan_from_json, which must
// reject anything malformed with InputError, including the piece list and its digests and
// a bundle's tree manifest (runtime/tree.hpp: paths, kinds, modes, sizes adding up).
// A plan it accepts must survive to_json and back unchanged.
#include "fuzz.hpp"
#include "hetcast/runtime/job.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    nlohmann::json j;
    if (!fuzz::parse_json(data, size, j)) return 0;
    for (const std::uint64_t max_message : {std::uint64_t{64} << 30, std::uint64_t{1} << 20}) {
        hetcast::JobPlan p;
        if (!fuzz::accepts([&] { p = hetcast::job_plan_from_json(j, max_message); })) continue;
        const nlohmann::json once = hetcast::to_json(p);
        hetcast::JobPlan q;
        if (!fuzz::accepts([&] { q = hetcast::job_plan_from_json(once, max_message); })) {
            fuzz::finding("an accepted plan is rejected after to_json: " + once.dump().substr(0, 300));
        }
        if (hetcast::to_json(q) != once) fuzz::finding("a plan changes through to_json and back");
    }
    return 0;
}
