// Node sets (ClusterShell's syntax): expansion and folding (groups: nodeset_groups.cpp).
#include "hetcast/runtime/nodeset.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "hetcast/error.hpp"
#include "nodeset_text.hpp"

namespace hetcast {
namespace {

using NameSet = std::unordered_set<std::string>;

constexpr std::size_t max_digits = 18;  // every bound fits an uint64 with room for +step
constexpr std::string_view operators = ",!&^";

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }
bool all_digits(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_digit); }
bool padded(std::string_view digits) { return digits.size() > 1 && digits[0] == '0'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

}  // namespace

std::string detail::quoted(std::string_view s) {
    constexpr std::size_t limit = 120;
    std::string out = "'";
    for (std::size_t i = 0; i < s.size() && i < limit; ++i) {
        const char c = s[i];
        if (is_control(c)) {
            static constexpr char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[(static_cast<unsigned char>(c) >> 4) & 0xf];
            out += hex[static_cast<unsigned char>(c) & 0xf];
        } else {
            out += c;
        }
    }
    if (s.size() > limit) out += "...";
    return out + "'";
}

namespace {

using detail::quoted;

std::string pad_to(std::uint64_t v, std::size_t width) {
    std::string s = std::to_string(v);
    if (s.size() < width) s.insert(0, width - s.size(), '0');
    return s;
}

/// Digit strings compared as numbers, any length: -1, 0 or 1.
int compare_numbers(std::string_view a, std::string_view b) {
    const auto strip = [](std::string_view s) {
        while (s.size() > 1 && s[0] == '0') s.remove_prefix(1);
        return s;
    };
    const std::string_view x = strip(a), y = strip(b);
    if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
    const int c = x.compare(y);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

/// ClusterShell's sort key: the name with its digit runs blanked out, the runs as numbers.
struct SortKey {
    std::string pattern;
    std::vector<std::string_view> numbers;
};

SortKey sort_key(std::string_view name) {
    SortKey k;
    for (std::size_t i = 0; i < name.size();) {
        if (is_digit(name[i])) {
            std::size_t j = i;
            while (j < name.size() && is_digit(name[j])) ++j;
            k.pattern += "%s";
            k.numbers.push_back(name.substr(i, j - i));
            i = j;
        } else {
            k.pattern += name[i++];
        }
    }
    return k;
}

bool key_less(const SortKey& ka, std::string_view a, const SortKey& kb, std::string_view b) {
    if (const int c = ka.pattern.compare(kb.pattern); c != 0) return c < 0;
    const std::size_t n = std::min(ka.numbers.size(), kb.numbers.size());
    for (std::size_t i = 0; i < n; ++i) {
        // Numerically only: the text breaks ties after every run has been compared.
        if (const int c = compare_numbers(ka.numbers[i], kb.numbers[i]); c != 0) return c < 0;
    }
    if (ka.numbers.size() != kb.numbers.size()) return ka.numbers.size() < kb.numbers.size();
    return a < b;
}

/// One parse of one node set text; every error names the whole text.
class Parser {
public:
    Parser(std::string_view text, const GroupResolver& groups) : text_(text), groups_(groups) {}

    std::vector<std::string> run() {
        if (trim(text_).empty()) fail("an empty node set");
        // Split at the operators outside brackets; the first operand is a union into nothing.
        std::vector<std::pair<char, std::string_view>> operands;
        char op = ',';
        std::size_t start = 0;
        int depth = 0;
        for (std::size_t i = 0; i <= text_.size(); ++i) {
            const char c = i < text_.size() ? text_[i] : '\0';
            if (c == '[') {
                if (depth > 0) fail("a '[' inside brackets");
                depth = 1;
            } else if (c == ']') {
                if (depth == 0) fail("a ']' without its '['");
                depth = 0;
            } else if (depth == 0 && (i == text_.size() || operators.find(c) != std::string_view::npos)) {
                const std::string_view operand = trim(text_.substr(start, i - start));
                if (operand.empty()) {
                    if (operands.empty() && i < text_.size()) fail(std::string("nothing before '") + c + "'");
                    fail(std::string("nothing after '") + op + "'");
                }
                operands.emplace_back(op, operand);
                op = c;
                start = i + 1;
            }
        }
        if (depth != 0) fail("a '[' without its ']'");

        NameSet acc;
        for (const auto& [o, operand] : operands) {
            NameSet rhs = element(operand);
            switch (o) {
                case ',':
                    acc.merge(rhs);
                    break;
                case '!':
                    for (const auto& n : rhs) acc.erase(n);
                    break;
                case '&':
                    std::erase_if(acc, [&rhs](const std::string& n) { return !rhs.contains(n); });
                    break;
                default:  // '^'
                    for (auto& n : rhs) {
                        if (!acc.erase(n)) acc.insert(n);
                    }
                    break;
            }
            if (acc.size() > nodeset_max_names) fail("more than " + std::to_string(nodeset_max_names) + " names");
        }
        std::vector<std::string> out(acc.begin(), acc.end());
        nodeset_sort(out);
        return out;
    }

private:
    [[noreturn]] void fail(const std::string& what) const { throw InputError("node set " + quoted(text_) + ": " + what); }

    NameSet element(std::string_view e) {
        if (e[0] == '@') return group(e);
        for (const char c : e) {
            if (is_space(c)) fail("whitespace inside the name " + quoted(e));
            if (is_control(c)) fail("a control character in " + quoted(e));
            if (c == '@') fail("'@' inside the name " + quoted(e) + " (it starts a group: '@NAME')");
        }
        return pattern(e);
    }

    NameSet group(std::string_view e) {
        const std::string name(e.substr(1));
        if (name.empty()) fail("a '@' without a group name");
        for (const char c : name) {
            if (c == '[' || c == ']' || c == '@' || is_space(c) || is_control(c)) {
                fail("the group name " + quoted(e) + " has a '" + std::string(1, c) + "'");
            }
        }
        if (!groups_) fail("groups are not available here (" + quoted(e) + ")");
        std::vector<std::string> names;
        try {
            names = groups_(name);
        } catch (const InputError& err) {
            fail(err.what());
        }
        if (names.size() > nodeset_max_names) fail(quoted(e) + " has more than " + std::to_string(nodeset_max_names) + " names");
        return {std::make_move_iterator(names.begin()), std::make_move_iterator(names.end())};
    }

    /// A name with bracket groups: the product of its ranges.
    NameSet pattern(std::string_view e) {
        std::vector<std::string> literals(1);
        std::vector<std::vector<std::string>> ranges;
        std::size_t count = 1;
        for (std::size_t i = 0; i < e.size();) {
            if (e[i] != '[') {
                literals.back() += e[i++];
                continue;
            }
            const std::size_t close = e.find(']', i);  // balanced: checked by run()
            if (!ranges.empty() && literals.back().empty()) fail("two bracket groups side by side in " + quoted(e));
            ranges.push_back(range_list(e.substr(i + 1, close - i - 1), e));
            count *= ranges.back().size();  // both at most nodeset_max_names: no overflow
            if (count > nodeset_max_names) {
                fail(quoted(e) + " expands past " + std::to_string(nodeset_max_names) + " names");
            }
            literals.emplace_back();
            i = close + 1;
        }
        NameSet out;
        out.reserve(count);
        std::vector<std::size_t> at(ranges.size(), 0);
        for (std::size_t k = 0; k < count; ++k) {
            std::string name = literals[0];
            for (std::size_t d = 0; d < ranges.size(); ++d) name += ranges[d][at[d]] + literals[d + 1];
            out.insert(std::move(name));
            for (std::size_t d = ranges.size(); d-- > 0;) {
                if (++at[d] < ranges[d].size()) break;
                at[d] = 0;
            }
        }
        return out;
    }

    std::uint64_t number(std::string_view s, std::string_view item, std::string_view e) {
        if (!all_digits(s)) fail(quoted(s) + " in " + quoted(e) + " is not a number (in " + quoted(item) + ")");
        if (s.size() > max_digits) fail("a number over " + std::to_string(max_digits) + " digits in " + quoted(e));
        return std::stoull(std::string(s));
    }

    /// "1-3,07,10-20/5" → the digit strings, as written (padding kept).
    std::vector<std::string> range_list(std::string_view inside, std::string_view e) {
        std::vector<std::string> out;
        std::size_t start = 0;
        for (std::size_t i = 0; i <= inside.size(); ++i) {
            if (i < inside.size() && inside[i] != ',') continue;
            const std::string_view item = inside.substr(start, i - start);
            start = i + 1;
            if (item.empty()) fail("an empty range in " + quoted(e));
            std::string_view base = item;
            std::uint64_t step = 1;
            if (const auto slash = item.find('/'); slash != std::string_view::npos) {
                base = item.substr(0, slash);
                step = number(item.substr(slash + 1), item, e);
                if (step == 0) fail("a step of 0 in " + quoted(e));
                if (base.find('-') == std::string_view::npos) fail("a step without a range: " + quoted(item) + " in " + quoted(e));
            }
            const auto dash = base.find('-');
            const std::string_view first = base.substr(0, dash);
            const std::string_view last = dash == std::string_view::npos ? first : base.substr(dash + 1);
            const std::uint64_t lo = number(first, item, e), hi = number(last, item, e);
            const std::size_t width = padded(first) ? first.size() : 0;
            if (padded(last) && last.size() != width) {
                fail("padding mismatch in " + quoted(item) + " in " + quoted(e) + " (both bounds zero-padded to one width)");
            }
            if (lo > hi) fail("a reversed range " + quoted(item) + " in " + quoted(e));
            if ((hi - lo) / step >= nodeset_max_names - out.size()) {
                fail(quoted(e) + " expands past " + std::to_string(nodeset_max_names) + " names");
            }
            for (std::uint64_t v = lo; v <= hi; v += step) out.push_back(pad_to(v, width));
        }
        return out;
    }

    std::string_view text_;
    const GroupResolver& groups_;
};

// --- folding -------------------------------------------------------------------------------

bool writable(std::string_view name) {
    if (name.empty() || name[0] == '@') return false;
    return std::none_of(name.begin(), name.end(), [](char c) {
        return is_space(c) || is_control(c) || c == ',' || c == '!' || c == '&' || c == '^' || c == '[' || c == ']' ||
               c == '@';
    });
}

/// Numbers, then text ("01" before "1").
struct DigitLess {
    bool operator()(const std::string& a, const std::string& b) const {
        const int c = compare_numbers(a, b);
        return c != 0 ? c < 0 : a < b;
    }
};
using Dim = std::set<std::string, DigitLess>;

/// "05,06,07,1,10" → "[1,05-07,10]": one run per class of width (a padded width, or the
/// natural width of unpadded numbers no padded one shares), consecutive values folded.
std::string fold_dim(const Dim& dim) {
    if (dim.size() == 1) return *dim.begin();
    std::set<std::size_t> widths;
    for (const auto& d : dim) {
        if (padded(d)) widths.insert(d.size());
    }
    std::map<std::size_t, std::vector<std::uint64_t>> classes;
    for (const auto& d : dim) {
        const std::size_t w = padded(d) || widths.contains(d.size()) ? d.size() : 0;
        classes[w].push_back(std::stoull(d));
    }
    std::vector<std::tuple<std::uint64_t, std::size_t, std::string>> items;
    for (auto& [w, values] : classes) {
        std::sort(values.begin(), values.end());
        for (std::size_t i = 0; i < values.size();) {
            std::size_t j = i;
            while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
            std::string text = pad_to(values[i], w);
            if (j > i) text += "-" + pad_to(values[j], w);
            items.emplace_back(values[i], w, std::move(text));
            i = j + 1;
        }
    }
    std::sort(items.begin(), items.end());
    std::string out = "[";
    for (const auto& item : items) out += (out.size() > 1 ? "," : "") + std::get<2>(item);
    return out + "]";
}

std::string dims_key(const std::vector<Dim>& dims, std::size_t skip) {
    std::string key;
    for (std::size_t d = 0; d < dims.size(); ++d) {
        if (d == skip) continue;
        for (const auto& x : dims[d]) key += x + ',';
        key += '|';
    }
    return key;
}

}  // namespace

bool nodeset_less(std::string_view a, std::string_view b) { return key_less(sort_key(a), a, sort_key(b), b); }

void nodeset_sort(std::vector<std::string>& names) {
    std::vector<SortKey> keys;
    keys.reserve(names.size());
    for (const auto& n : names) keys.push_back(sort_key(n));
    std::vector<std::size_t> order(names.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::size_t i, std::size_t j) { return key_less(keys[i], names[i], keys[j], names[j]); });
    std::vector<std::string> sorted;
    sorted.reserve(names.size());
    for (const std::size_t i : order) sorted.push_back(std::move(names[i]));
    names = std::move(sorted);
}

std::vector<std::string> expand_nodeset(std::string_view text, const GroupResolver& groups) {
    return Parser(text, groups).run();
}

std::string fold_nodeset(const std::vector<std::string>& names) {
    // Names by their text between digit runs (runs over max_digits count as text); each
    // group starts as one product of single values per run.
    std::map<std::vector<std::string>, std::vector<std::vector<Dim>>> groups;
    std::vector<std::string> verbatim;
    const std::set<std::string> unique(names.begin(), names.end());
    for (const auto& name : unique) {
        if (!writable(name)) {
            verbatim.push_back(name);
            continue;
        }
        std::vector<std::string> texts(1);
        std::vector<Dim> dims;
        for (std::size_t i = 0; i < name.size();) {
            std::size_t j = i;
            while (j < name.size() && is_digit(name[j])) ++j;
            if (j > i && j - i <= max_digits) {
                dims.push_back(Dim{name.substr(i, j - i)});
                texts.emplace_back();
                i = j;
            } else if (j > i) {
                texts.back() += name.substr(i, j - i);
                i = j;
            } else {
                texts.back() += name[i++];
            }
        }
        groups[texts].push_back(std::move(dims));
    }

    // Products that differ in one run only are merged, run by run from the last, until
    // nothing merges: each merge keeps the union exact (the other runs are equal).
    std::vector<std::pair<std::string, std::string>> elements;  // (first name, text) for ordering
    for (auto& [texts, entries] : groups) {
        const std::size_t runs = texts.size() - 1;
        for (bool merged = runs > 0; merged && entries.size() > 1;) {
            merged = false;
            for (std::size_t d = runs; d-- > 0;) {
                std::map<std::string, std::size_t> index;
                std::vector<std::vector<Dim>> next;
                for (auto& e : entries) {
                    const auto [it, fresh] = index.emplace(dims_key(e, d), next.size());
                    if (fresh) {
                        next.push_back(std::move(e));
                    } else {
                        next[it->second][d].merge(e[d]);
                        merged = true;
                    }
                }
                entries = std::move(next);
            }
        }
        for (const auto& e : entries) {
            std::string text = texts[0], first = texts[0];
            for (std::size_t d = 0; d < runs; ++d) {
                text += fold_dim(e[d]) + texts[d + 1];
                first += *e[d].begin() + texts[d + 1];
            }
            elements.emplace_back(std::move(first), std::move(text));
        }
    }
    for (auto& v : verbatim) elements.emplace_back(v, v);
    std::sort(elements.begin(), elements.end(),
              [](const auto& a, const auto& b) { return nodeset_less(a.first, b.first); });
    std::string out;
    for (const auto& [first, text] : elements) out += (out.empty() ? "" : ",") + text;
    return out;
}

}  // namespace hetcast
