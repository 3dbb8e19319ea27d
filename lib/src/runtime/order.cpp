#include "hetcast/runtime/order.hpp"

#include <algorithm>

#include "../model/yaml_document.hpp"
#include "hetcast/error.hpp"

namespace hetcast {
using json = nlohmann::json;

namespace {

/// What the signature covers: the request without its order, the addressee and the time.
std::string signed_text(json request, const std::string& to, std::int64_t issued) {
    request.erase("order");
    // As the addressee will see it: bytes that are not UTF-8 travel as U+FFFD.
    return "hetcast-order-v1\n" + to + "\n" + std::to_string(issued) + "\n" +
           request.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

json sign_order(const net::Identity& id, json request, const std::string& to, std::int64_t now) {
    const std::string sig = net::sign(id, signed_text(request, to, now));
    request["order"] = {{"to", to}, {"issued", now}, {"cert", id.cert_pem}, {"sig", sig}};
    return request;
}

namespace {

struct Order {
    net::PeerIdentity who;
    std::string to;
    std::int64_t issued = 0;
};

/// The signer, addressee and time of a well-formed order of this cluster's operator
/// (signature and certificate checked at `now`). Throws InputError.
Order read_order(const json& request, std::string_view ca_pem, std::int64_t now) {
    if (!request.is_object() || !request.contains("order")) throw InputError("no operator's order");
    const json& o = request["order"];
    if (!o.is_object() || !o.contains("to") || !o["to"].is_string() || !o.contains("issued") ||
        !o["issued"].is_number_integer() || !o.contains("cert") || !o["cert"].is_string() || !o.contains("sig") ||
        !o["sig"].is_string()) {
        throw InputError("a malformed order");
    }
    Order out;
    out.issued = o["issued"].get<std::int64_t>();
    out.to = o["to"].get<std::string>();
    out.who = net::verify_signature(o["cert"].get<std::string>(), ca_pem, signed_text(request, out.to, out.issued),
                                    o["sig"].get<std::string>(), now);
    if (out.who.role != net::Role::operator_) throw InputError("the order is signed by '" + out.who.name + "', a member");
    return out;
}

}  // namespace

net::PeerIdentity check_order(const json& request, std::string_view ca_pem, const std::vector<net::Revocation>& revoked,
                              const std::string& to, std::int64_t now) {
    const Order ord = read_order(request, ca_pem, now);
    if (ord.to.empty() || ord.to != to) throw InputError("the order was given to '" + ord.to + "', not to '" + to + "'");
    if (ord.issued > now + 60 || now - ord.issued > order_lifetime) {
        throw InputError("the order is too old (or from the future)");
    }
    for (const auto& r : revoked) {
        if (net::revokes(r, ord.who)) {
            throw InputError("the order is signed by '" + ord.who.name + "', whose identity was revoked");
        }
    }
    return ord.who;
}

net::Revocation revocation_of(const json& leave_request, std::string_view ca_pem,
                              const std::vector<net::Revocation>& revoked, const std::string& to, std::int64_t now) {
    (void)check_order(leave_request, ca_pem, revoked, to, now);
    if (leave_request.value("cmd", "") != "leave" || !leave_request.contains("name") || !leave_request["name"].is_string()) {
        throw InputError("not a leave order");
    }
    return {leave_request["name"].get<std::string>(), leave_request["order"]["issued"].get<std::int64_t>(),
            leave_request.dump()};
}

void check_revocation(const net::Revocation& r, std::string_view ca_pem) {
    const json req = json::parse(r.order, nullptr, false);
    if (req.is_discarded()) throw InputError("the revocation of '" + r.name + "' has no operator's order");
    // The signature is checked as of when it was made: the operator's certificate may
    // have expired since, and the revocation still stands.
    Order ord;
    try {
        ord = read_order(req, ca_pem, req.contains("order") && req["order"].is_object()
                                          ? req["order"].value("issued", std::int64_t{0})
                                          : 0);
    } catch (const InputError& e) {
        throw InputError("the revocation of '" + r.name + "': " + e.what());
    }
    if (req.value("cmd", "") != "leave" || req.value("name", "") != r.name || ord.issued != r.since) {
        throw InputError("the revocation of '" + r.name + "' does not match its order");
    }
}

bool order_names_file(const json& request, const std::string& member, const std::string& path) {
    if (!request.contains("pattern") || !request["pattern"].is_string()) return false;
    try {
        const YAML::Node root = detail::load_yaml_document(request["pattern"].get<std::string>()).root;
        if (!root.IsSequence()) return false;
        return std::any_of(root.begin(), root.end(), [&](const YAML::Node& e) {
            return e.IsMap() && e["source"] && e["source"].IsScalar() && e["source"].Scalar() == member && e["file"] &&
                   e["file"].IsScalar() && e["file"].Scalar() == path;
        });
    } catch (const YAML::Exception&) {
        return false;
    }
}

}  // namespace hetcast
