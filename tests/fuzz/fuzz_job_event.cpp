// A job_report frame's event (runtime/job.hpp): JSON, then job_event_from_json. An event it
// accepts must survive to_json and back.
#include "fuzz.hpp"
#include "hetcast/runtime/job.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    nlohmann::json j;
    if (!fuzz::parse_json(data, size, j)) return 0;
    hetcast::JobEvent e;
    if (!fuzz::accepts([&] { e = hetcast::job_event_from_json(j); })) return 0;
    const nlohmann::json once = hetcast::to_json(e);
    hetcast::JobEvent f;
    if (!fuzz::accepts([&] { f = hetcast::job_event_from_json(once); })) {
        fuzz::finding("an accepted event is rejected after to_json: " + once.dump().substr(0, 300));
    }
    if (hetcast::to_json(f) != once) fuzz::finding("an event changes through to_json and back");
    return 0;
}
