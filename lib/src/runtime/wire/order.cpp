#include "hetcast/runtime/order.hpp"

#include <algorithm>

#include "../../model/yaml_document.hpp"
#include "hetcast/error.hpp"

namespace hetcast {
using json = nlohmann::json;

namespace {

/// `key` of `j` when it is a string, else empty: for fields that decide nothing alone.
std::string text_of(const json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

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

/// The signer, addressee and time of a well-formed signed request of this cluster
/// (signature and certificate checked at `now`), whoever signed it. Throws InputError.
Order read_signed(const json& request, std::string_view ca_pem, std::int64_t now) {
    if (!request.is_object() || !request.contains("order")) throw InputError("no operator's order");
    const json& o = request["order"];
    if (!o.is_object() || !o.contains("to") || !o["to"].is_string() || !o.contains("issued") ||
        !o["issued"].is_number_integer() || !o.contains("cert") || !o["cert"].is_string() || !o.contains("sig") ||
        !o["sig"].is_string() || o.size() != 4) {
        // Nothing but these four: the signature does not cover the order object itself, so
        // any other key in it would ride along unsigned (found by fuzz_plan_order).
        throw InputError("a malformed order");
    }
    Order out;
    out.issued = o["issued"].get<std::int64_t>();
    out.to = o["to"].get<std::string>();
    out.who = net::verify_signature(o["cert"].get<std::string>(), ca_pem, signed_text(request, out.to, out.issued),
                                    o["sig"].get<std::string>(), now);
    return out;
}

/// read_signed() of an order: the operator's. Throws InputError.
Order read_order(const json& request, std::string_view ca_pem, std::int64_t now) {
    Order out = read_signed(request, ca_pem, now);
    if (out.who.role != net::Role::operator_) throw InputError("the order is signed by '" + out.who.name + "', a member");
    return out;
}

void check_age(std::int64_t issued, std::int64_t now) {
    if (issued > now + 60 || now - issued > order_lifetime) throw InputError("the order is too old (or from the future)");
}

void check_not_revoked(const net::PeerIdentity& who, const std::vector<net::Revocation>& revoked) {
    for (const auto& r : revoked) {
        if (net::revokes(r, who)) {
            throw InputError("the order is signed by '" + who.name + "', whose identity was revoked");
        }
    }
}

}  // namespace

net::PeerIdentity check_order(const json& request, std::string_view ca_pem, const std::vector<net::Revocation>& revoked,
                              const std::string& to, std::int64_t now) {
    const Order ord = read_order(request, ca_pem, now);
    if (ord.to.empty() || ord.to != to) throw InputError("the order was given to '" + ord.to + "', not to '" + to + "'");
    check_age(ord.issued, now);
    check_not_revoked(ord.who, revoked);
    return ord.who;
}

json sign_join(const net::Identity& id, json request, std::int64_t now) { return sign_order(id, std::move(request), "", now); }

net::PeerIdentity check_join(const json& request, std::string_view ca_pem, const std::vector<net::Revocation>& revoked,
                             std::int64_t now) {
    const Order ord = read_signed(request, ca_pem, now);
    if (text_of(request, "cmd") != "join") throw InputError("not a join request");
    if (ord.who.role != net::Role::member || text_of(request, "name") != ord.who.name) {
        throw InputError("a join must be signed by the member that joins");
    }
    check_age(ord.issued, now);
    check_not_revoked(ord.who, revoked);
    return ord.who;
}

std::string check_membership_order(const json& order, std::string_view ca_pem, const std::vector<net::Revocation>& revoked,
                                   const std::string& sender, std::int64_t now, const std::vector<Member>* current,
                                   const std::vector<Member>* members) {
    if (!order.is_object()) throw InputError("no operator's order");
    const std::string cmd = text_of(order, "cmd");
    if (cmd == "join") {
        try {
            (void)check_order(order, ca_pem, revoked, sender, now);  // an operator's join of someone
        } catch (const InputError&) {
            (void)check_join(order, ca_pem, revoked, now);
        }
    } else if (cmd == "probe" || cmd == "leave") {
        (void)check_order(order, ca_pem, revoked, sender, now);
    } else {
        throw InputError("a '" + cmd.substr(0, 32) + "' order changes no member list or map");
    }
    if (!members) return cmd;
    if (cmd == "probe") throw InputError("a probe changes no member list");
    const std::string name = text_of(order, "name");
    const auto in = [](const std::vector<Member>& ms, const std::string& n) {
        return std::find_if(ms.begin(), ms.end(), [&](const Member& m) { return m.name == n; });
    };
    if (cmd == "leave" && in(*members, name) != members->end()) throw InputError("'" + name + "' leaves, yet it is in the list");
    if (cmd == "join") {
        const auto it = in(*members, name);
        const auto port = order.find("port");
        if (it == members->end() || it->host != text_of(order, "host") || port == order.end() ||
            !port->is_number_unsigned() || it->port != port->get<std::uint64_t>()) {
            throw InputError("the list does not have '" + name + "' where its join asked");
        }
    }
    if (current) {
        for (const Member& m : *current) {
            if (m.name != name && in(*members, m.name) == members->end()) {
                throw InputError("the list leaves out '" + m.name + "', which no order removed");
            }
        }
    }
    return cmd;
}

net::Revocation revocation_of(const json& leave_request, std::string_view ca_pem,
                              const std::vector<net::Revocation>& revoked, const std::string& to, std::int64_t now) {
    (void)check_order(leave_request, ca_pem, revoked, to, now);
    if (text_of(leave_request, "cmd") != "leave" || !leave_request.contains("name") || !leave_request["name"].is_string()) {
        throw InputError("not a leave order");
    }
    return {leave_request["name"].get<std::string>(), leave_request["order"]["issued"].get<std::int64_t>(),
            leave_request.dump()};
}

void check_revocation(const net::Revocation& r, std::string_view ca_pem) {
    const json req = json::parse(r.order, nullptr, false);
    if (req.is_discarded()) throw InputError("the revocation of '" + r.name + "' has no operator's order");
    // A malformed `issued` is read_order's to refuse (as InputError), never json's to throw.
    const json issued = req.is_object() && req.contains("order") && req["order"].is_object()
                            ? req["order"].value("issued", json())
                            : json();
    // The signature is checked as of when it was made: the operator's certificate may
    // have expired since, and the revocation still stands.
    Order ord;
    try {
        ord = read_order(req, ca_pem, issued.is_number_integer() ? issued.get<std::int64_t>() : 0);
    } catch (const InputError& e) {
        throw InputError("the revocation of '" + r.name + "': " + e.what());
    }
    if (text_of(req, "cmd") != "leave" || text_of(req, "name") != r.name || ord.issued != r.since) {
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
