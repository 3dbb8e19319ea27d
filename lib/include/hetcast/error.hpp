#pragma once
/// Errors at hetcast's API edge. See docs/errors.md for the policy.
#include <stdexcept>
#include <string>

namespace hetcast {

/// Base of every exception hetcast throws on purpose.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The caller's input is wrong: a bad file, an unknown node, an impossible request.
/// Front ends print what() on one line and exit with status 2.
class InputError : public Error {
public:
    using Error::Error;
};

/// A schedule that cannot be executed (relays a message it does not hold,
/// misses or repeats a destination, deadlocks).
class InfeasibleSchedule : public Error {
public:
    using Error::Error;
};

}  // namespace hetcast
