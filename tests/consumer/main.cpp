// Plans Bhat's eq. (1) with ECEF through the installed library; prints the completion time.
#include <iostream>

#include <hetcast/model/network.hpp>
#include <hetcast/report/plan_report.hpp>

int main() {
    using namespace hetcast;
    const Network net = Network::from_costs({"P0", "P1", "P2"}, {{0, 10, 995}, {2000, 0, 10}, {70, 5, 0}});
    const PlanRequest req = make_request(net, 0, {}, 1, ExecModel::blocking);
    const PlanResult r = plan_and_simulate(net, req, find_algorithm("ecef"));
    std::cout << r.timeline.completion << '\n';
    return r.timeline.completion == 20 ? 0 : 1;
}
