// Pattern files (Wu §3's multi-node multicast): a YAML list of {source, size, dests, file}.
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <unordered_set>

#include "hetcast/error.hpp"
#include "hetcast/model/units.hpp"
#include "hetcast/sched/pattern.hpp"

namespace hetcast {
namespace {

// yaml-cpp marks are 0-based, and -1 where there is no position (an empty document).
[[noreturn]] void fail(std::string_view origin, const YAML::Mark& at, const std::string& what) {
    const int line = at.line < 0 ? 1 : at.line + 1;
    const int column = at.column < 0 ? 1 : at.column + 1;
    throw InputError(std::string(origin) + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + what);
}

struct Field {
    YAML::Node value;
    YAML::Mark key_at;
    bool given = false;
    // A null value has no useful mark of its own: point at its key.
    [[nodiscard]] YAML::Mark at() const { return value.IsNull() ? key_at : value.Mark(); }
};

class EntryParser {
public:
    EntryParser(std::string_view origin, const Network& net) : origin_(origin), net_(net) {}

    void parse(const YAML::Node& entry, PatternRequest& out) const {
        if (!entry.IsMap()) fail(origin_, entry.Mark(), "a pattern entry is a map {source, size, dests}");
        Field source, size, dests, file;
        for (const auto& kv : entry) {
            if (!kv.first.IsScalar()) fail(origin_, kv.first.Mark(), "keys are names (source, size, dests, file)");
            const std::string& key = kv.first.Scalar();
            Field* f = key == "source" ? &source
                       : key == "size" ? &size
                       : key == "dests" ? &dests
                       : key == "file" ? &file
                                       : nullptr;
            if (!f) fail(origin_, kv.first.Mark(), "unknown key '" + key + "' (known: source, size, dests, file)");
            if (f->given) fail(origin_, kv.first.Mark(), "duplicate key '" + key + "'");
            *f = Field{kv.second, kv.first.Mark(), true};
        }
        for (const auto& [f, name] : {std::pair{&source, "source"}, {&dests, "dests"}}) {
            if (!f->given) fail(origin_, entry.Mark(), std::string("missing '") + name + "'");
        }
        // A file's size is the file's: only the runtime, on the source's host, reads it.
        if (!size.given && !file.given) fail(origin_, entry.Mark(), "missing 'size' (or 'file')");
        Message m;
        m.source = node(source, "source");
        m.size = size.given ? bytes(size) : 0;
        m.dests = destinations(dests, m.source);
        std::string path;
        if (file.given) {
            if (!file.value.IsScalar() || file.value.Scalar().empty()) fail(origin_, file.at(), "file must be a path");
            path = file.value.Scalar();
        }
        out.messages.push_back(std::move(m));
        out.files.push_back(std::move(path));
        out.sized.push_back(size.given);
    }

private:
    NodeId node(const Field& f, const char* what) const {
        if (!f.value.IsScalar()) fail(origin_, f.at(), std::string(what) + " must be a node name");
        const auto id = net_.find(f.value.Scalar());
        if (!id) fail(origin_, f.at(), "unknown node '" + f.value.Scalar() + "'");
        return *id;
    }

    double bytes(const Field& f) const {
        if (!f.value.IsScalar()) fail(origin_, f.at(), "size must be a byte count like 1048576 or 64KiB");
        try {
            return parse_bytes(f.value.Scalar());
        } catch (const InputError& e) {
            fail(origin_, f.at(), e.what());
        }
    }

    std::vector<NodeId> destinations(const Field& f, NodeId source) const {
        std::vector<NodeId> out;
        if (f.value.IsScalar() && f.value.Scalar() == "all") {
            for (NodeId v = 0; v < net_.size(); ++v) {
                if (v != source) out.push_back(v);
            }
            if (out.empty()) fail(origin_, f.at(), "empty dests: the network has no other node");
            return out;
        }
        if (!f.value.IsSequence()) fail(origin_, f.at(), "dests must be a list of node names or 'all'");
        if (f.value.size() == 0) fail(origin_, f.at(), "empty dests");
        std::unordered_set<NodeId> seen;
        for (const auto& item : f.value) {
            const NodeId d = node(Field{item, item.Mark(), true}, "a destination");
            if (d == source) fail(origin_, item.Mark(), "source '" + net_.name(d) + "' is in its own dests");
            if (!seen.insert(d).second) fail(origin_, item.Mark(), "duplicate dest '" + net_.name(d) + "'");
            out.push_back(d);
        }
        return out;
    }

    std::string_view origin_;
    const Network& net_;
};

}  // namespace

PatternRequest parse_pattern(std::string_view yaml, std::string_view origin, const Network& net) {
    YAML::Node root;
    try {
        root = YAML::Load(std::string(yaml));
    } catch (const YAML::Exception& e) {
        fail(origin, e.mark, e.msg);
    }
    if (!root.IsSequence()) fail(origin, root.Mark(), "a pattern is a list of {source, size, dests} entries");
    PatternRequest req;
    const EntryParser parser(origin, net);
    for (const auto& entry : root) parser.parse(entry, req);
    return req;
}

PatternRequest load_pattern(const std::filesystem::path& file, const Network& net) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw InputError("cannot read pattern file '" + file.string() + "'");
    const std::string text(std::istreambuf_iterator<char>(in), {});
    return parse_pattern(text, file.string(), net);
}

void check_pattern(const Network& net, const PatternRequest& req) {
    const std::size_t n = net.size();
    if (!req.files.empty() && req.files.size() != req.messages.size()) {
        throw InputError("a pattern has one file per message or none");
    }
    std::vector<char> seen(n, 0);
    for (const Message& m : req.messages) {
        if (m.source >= n) throw InputError("message source out of range");
        if (!std::isfinite(m.size) || m.size < 0) throw InputError("message size must be a non-negative number of bytes");
        for (NodeId d : m.dests) {
            if (d >= n) throw InputError("destination out of range");
            if (d == m.source) throw InputError("source '" + net.name(d) + "' is in its own dests");
            if (seen[d]) throw InputError("duplicate dest '" + net.name(d) + "' of the message of " + net.name(m.source));
            seen[d] = 1;
        }
        for (NodeId d : m.dests) seen[d] = 0;
    }
}

}  // namespace hetcast
