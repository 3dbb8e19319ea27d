#include "hetcast/sched/schedule.hpp"

namespace hetcast {

std::size_t Schedule::transfer_count() const {
    std::size_t n = 0;
    for (const auto& list : tasks) {
        for (const auto& t : list) n += t.op == Op::send;
    }
    return n;
}

}  // namespace hetcast
