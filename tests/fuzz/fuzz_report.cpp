// A job_report frame's report (runtime/report.hpp): JSON, then report_from_json; what it
// accepts is printed (text from the network made safe for a terminal) and must survive
// to_json and back.
#include <sstream>

#include "fuzz.hpp"
#include "hetcast/runtime/report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    nlohmann::json j;
    if (!fuzz::parse_json(data, size, j)) return 0;
    hetcast::JobReport r;
    if (!fuzz::accepts([&] { r = hetcast::report_from_json(j); })) return 0;
    std::ostringstream out;
    fuzz::accepts([&] {
        hetcast::print_report(out, r);
        hetcast::print_reports_side_by_side(out, {r, r});
    });
    const nlohmann::json once = hetcast::to_json(r);
    hetcast::JobReport s;
    if (!fuzz::accepts([&] { s = hetcast::report_from_json(once); })) {
        fuzz::finding("an accepted report is rejected after to_json: " + once.dump().substr(0, 300));
    }
    if (hetcast::to_json(s) != once) fuzz::finding("a report changes through to_json and back");
    return 0;
}
