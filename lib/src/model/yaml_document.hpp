#pragma once
// The one YAML document of a text, parsed without YAML::LoadAll: in Debian's yaml-cpp 0.7
// LoadAll never returns on a text whose first document starts with ',' (yaml-cpp issue
// #1040, fixed upstream by PR #1319), and these texts come from peers too (maps in set_map
// and join answers). At most two documents are looked at. Internal to lib/src.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <optional>
#include <sstream>
#include <string>
#include <string_view>

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
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    Starts starts;
    for (int handled = 0; handled < 2 && parser.HandleNextDocument(starts); ++handled) {
    }
    if (starts.documents >= 2) d.second = starts.second;
    return d;
}

}  // namespace hetcast::detail
