#pragma once
// wait_for(pred, timeout): poll instead of sleeping a fixed time; every wait has a bound.
#include <chrono>
#include <thread>

namespace hetcast::test {

template <class Pred>
bool wait_for(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > end) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
}

}  // namespace hetcast::test
