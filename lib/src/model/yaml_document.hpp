#pragma once
// The one YAML document of a text, parsed without YAML::LoadAll: in Debian's yaml-cpp 0.7
// LoadAll never returns on a text whose first document starts with ',' (yaml-cpp issue
// #1040, fixed upstream by PR #1319), and these texts come from peers too (maps in set_map
// and join answers). At most two documents are looked at. Also what every reader of such
// a text shares (networks, the daemon's config, cluster files): failures at
// origin:line:column, mappings with known keys, lists. Internal to lib/src.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "hetcast/error.hpp"

namespace hetcast::detail {

struct YamlDocument {
    YAML::Node root;                   ///< null when the text holds no document
    std::optional<YAML::Mark> second;  ///< where a second document starts, if there is one
};

inline YamlDocument load_yaml_document(std::string_view text) {
    // Where the second document's first node is (its start, when it has none).
    struct Starts final : YAML::EventHandler {
        int documents = 0;
        bool placed = false;
        YAML::Mark second;
        void node(const YAML::Mark& m) {
            if (documents == 2 && !placed) second = m, placed = true;
        }
        void OnDocumentStart(const YAML::Mark& m) override {
            if (++documents == 2) second = m;
        }
        void OnDocumentEnd() override {}
        void OnNull(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
        void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
        void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { node(m); }
        void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
            node(m);
        }
        void OnSequenceEnd() override {}
        void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
            node(m);
        }
        void OnMapEnd() override {}
    };
    YamlDocument d;
    d.root = YAML::Load(std::string(text));
    // A second document needs a marker ("---" or "...") at the start of a line. Without one,
    // skip the second parse: the scanner is most of a large map's loading time.
    const auto marker_at = [&](std::size_t i) {
        return text.compare(i, 3, "---") == 0 || text.compare(i, 3, "...") == 0;
    };
    bool marker = marker_at(0);
    for (std::size_t i = text.find('\n'); !marker && i != std::string_view::npos; i = text.find('\n', i + 1)) {
        marker = marker_at(i + 1);
    }
    if (!marker) return d;
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    Starts starts;
    for (int handled = 0; handled < 2 && parser.HandleNextDocument(starts); ++handled) {
    }
    if (starts.documents >= 2) d.second = starts.second;
    return d;
}

/// The text of `file` (named `origin` in failures), refusing more than `limit` bytes
/// ("larger than `limit_text`"). Throws InputError("origin: cannot read: why").
inline std::string read_text_file(const std::filesystem::path& file, const std::string& origin, std::size_t limit,
                                  const std::string& limit_text) {
    const auto cannot_read = [&](int err) {
        return InputError(origin + ": cannot read: " + std::generic_category().message(err));
    };
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(file.c_str(), "rb"), &std::fclose);
    if (!f) throw cannot_read(errno);
    std::string text;
    std::vector<char> buf(1 << 16);
    while (true) {
        const std::size_t got = std::fread(buf.data(), 1, buf.size(), f.get());
        text.append(buf.data(), got);
        if (text.size() > limit) throw InputError(origin + ": cannot read: larger than " + limit_text);
        if (got < buf.size()) break;
    }
    if (std::ferror(f.get())) throw cannot_read(errno ? errno : EIO);
    return text;
}

/// User text inside a one-line message: short, quoted, no control characters.
inline std::string quoted_text(std::string_view s) {
    constexpr std::size_t limit = 40;
    std::string out = "'";
    for (std::size_t i = 0; i < s.size() && i < limit; ++i) {
        out += std::iscntrl(static_cast<unsigned char>(s[i])) ? '?' : s[i];
    }
    return out + (s.size() > limit ? "...'" : "'");
}

inline bool has_control(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::iscntrl(c); });
}

struct YamlEntry {
    YAML::Node key;
    YAML::Node value;
};
using YamlEntries = std::map<std::string, YamlEntry, std::less<>>;

/// Reads one text (named `origin` in failures); every failure is an InputError
/// "origin:line:column: what".
class YamlReader {
public:
    explicit YamlReader(std::string_view origin) : origin_(origin) {}

    [[noreturn]] void fail(const YAML::Mark& at, const std::string& what) const {
        const int line = at.is_null() ? 1 : at.line + 1;
        const int column = at.is_null() ? 1 : at.column + 1;
        throw InputError(origin_ + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + what);
    }

    /// `build()`, with an InputError it throws placed at `at`.
    template <typename F>
    auto located(const YAML::Mark& at, F&& build) const {
        try {
            return build();
        } catch (const InputError& e) {
            fail(at, e.what());
        }
    }

    /// The keys of a mapping, each one of `allowed` and at most once; with `values_required`,
    /// none with an empty value.
    YamlEntries entries(const YAML::Node& map, const std::string& what, std::initializer_list<std::string_view> allowed,
                        bool values_required = false) const {
        const std::string prefix = what.empty() ? "" : what + ": ";
        if (!map.IsMap()) fail(map.Mark(), prefix + "expected a mapping");
        YamlEntries out;
        for (auto it = map.begin(); it != map.end(); ++it) {
            if (!it->first.IsScalar()) fail(it->first.Mark(), prefix + "expected a key name");
            const std::string& key = it->first.Scalar();
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
                std::string known;
                for (auto a : allowed) known += (known.empty() ? "" : ", ") + std::string(a);
                fail(it->first.Mark(), prefix + "unknown key " + quoted_text(key) + " (known: " + known + ")");
            }
            if (!out.emplace(key, YamlEntry{it->first, it->second}).second) {
                fail(it->first.Mark(), prefix + "duplicate key " + quoted_text(key));
            }
            // yaml-cpp gives an empty value no position, so point at its key.
            if (values_required && it->second.IsNull()) fail(it->first.Mark(), prefix + quoted_text(key) + " has no value");
        }
        return out;
    }

    const YAML::Node& sequence(const YAML::Node& n, const std::string& what) const {
        if (!n.IsSequence()) fail(n.Mark(), what + ": expected a list");
        return n;
    }

    /// `build(root)` of the one document of `text` (at most `limit` bytes, `limit_text` in
    /// the failure); an empty text fails as "empty KIND".
    template <typename F>
    auto document(std::string_view text, std::size_t limit, const char* limit_text, const char* kind, F&& build) const {
        try {
            if (text.size() > limit) fail(YAML::Mark(), std::string("larger than ") + limit_text);
            const auto doc = load_yaml_document(text);
            if (doc.second) fail(*doc.second, "expected a single YAML document");
            if (!doc.root || doc.root.IsNull()) fail(YAML::Mark(), std::string("empty ") + kind);
            return build(doc.root);
        } catch (const InputError&) {
            throw;
        } catch (const YAML::Exception& e) {
            fail(e.mark, e.msg);
        } catch (const std::exception& e) {
            fail(YAML::Mark(), std::string("cannot parse: ") + e.what());
        }
    }

private:
    std::string origin_;
};

}  // namespace hetcast::detail
