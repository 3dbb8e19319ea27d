// A job_start frame's payload (runtime/job.hpp): job_start_from_json takes the raw text.
// A start it accepts must survive to_json and back.
#include "fuzz.hpp"
#include "hetcast/runtime/job.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    hetcast::JobStart s;
    if (!fuzz::accepts([&] { s = hetcast::job_start_from_json(fuzz::text(data, size)); })) return 0;
    const std::string once = hetcast::to_json(s).dump();
    hetcast::JobStart t;
    if (!fuzz::accepts([&] { t = hetcast::job_start_from_json(once); })) {
        fuzz::finding("an accepted start is rejected after to_json: " + once.substr(0, 300));
    }
    if (!(t.resume == s.resume)) fuzz::finding("a start changes through to_json and back");
    return 0;
}
