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
    return "hetcast-order-v1\n" + to + "\n" + std::to_string(issued) + "\n" + request.dump();
}

}  // namespace

json sign_order(const net::Identity& id, json request, const std::string& to, std::int64_t now) {
    const std::string sig = net::sign(id, signed_text(request, to, now));
    request["order"] = {{"to", to}, {"issued", now}, {"cert", id.cert_pem}, {"sig", sig}};
    return request;
}

net::PeerIdentity check_order(const json& request, std::string_view ca_pem, const std::vector<net::Revocation>& revoked,
                              const std::string& to, std::int64_t now) {
    if (!request.is_object() || !request.contains("order")) throw InputError("no operator's order");
    const json& o = request["order"];
    if (!o.is_object() || !o.contains("to") || !o["to"].is_string() || !o.contains("issued") ||
        !o["issued"].is_number_integer() || !o.contains("cert") || !o["cert"].is_string() || !o.contains("sig") ||
        !o["sig"].is_string()) {
        throw InputError("a malformed order");
    }
    const auto issued = o["issued"].get<std::int64_t>();
    const auto addressee = o["to"].get<std::string>();
    if (addressee.empty() || addressee != to) {
        throw InputError("the order was given to '" + addressee + "', not to '" + to + "'");
    }
    if (issued > now + 60 || now - issued > order_lifetime) throw InputError("the order is too old (or from the future)");
    const net::PeerIdentity who = net::verify_signature(o["cert"].get<std::string>(), ca_pem,
                                                        signed_text(request, addressee, issued), o["sig"].get<std::string>(), now);
    if (who.role != net::Role::operator_) throw InputError("the order is signed by '" + who.name + "', a member");
    for (const auto& r : revoked) {
        if (net::revokes(r, who)) throw InputError("the order is signed by '" + who.name + "', whose identity was revoked");
    }
    return who;
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
