#pragma once
// Identities for tests: one cluster CA per test process, and another one for outsiders.
#include <string>

#include "hetcast/net/identity.hpp"

namespace hetcast::test {

inline const net::ClusterCa& cluster_ca() {
    static const net::ClusterCa ca = net::ClusterCa::create("test-cluster");
    return ca;
}

inline const net::ClusterCa& other_ca() {
    static const net::ClusterCa ca = net::ClusterCa::create("other-cluster");
    return ca;
}

/// An identity the test cluster's CA issued.
inline net::Identity identity(const std::string& name, net::Role role = net::Role::member) {
    return cluster_ca().issue(name, role);
}

}  // namespace hetcast::test
