#include "hetcast/runtime/tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "hetcast/error.hpp"
#include "hetcast/runtime/byte_text.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/pieces.hpp"

namespace hetcast {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const char* kind_name(TreeEntry::Kind k) {
    switch (k) {
        case TreeEntry::Kind::dir: return "dir";
        case TreeEntry::Kind::symlink: return "link";
        case TreeEntry::Kind::file: break;
    }
    return "file";
}

/// The first 80 bytes of a path, for error lines (a peer's text may be anything).
std::string shown(const std::string& s) { return s.size() > 80 ? s.substr(0, 80) + "..." : s; }

/// A relative, normalised path: components separated by one '/', none empty, '.' or '..',
/// none over 255 bytes, no NUL, at most 4095 bytes in all.
bool clean_path(const std::string& p) {
    if (p.empty() || p.size() > 4095 || p.find('\0') != std::string::npos) return false;
    std::size_t at = 0;
    while (at <= p.size()) {
        const std::size_t end = std::min(p.find('/', at), p.size());
        const std::string_view part(p.data() + at, end - at);
        if (part.empty() || part == "." || part == ".." || part.size() > 255) return false;
        at = end + 1;
    }
    return true;
}

std::string errno_text() { return std::strerror(errno); }

std::shared_ptr<int> own_fd(int fd) {
    return std::shared_ptr<int>(new int(fd), [](int* p) {
        ::close(*p);
        delete p;
    });
}

}  // namespace

json tree_to_json(const std::vector<TreeEntry>& tree) {
    json out = json::array();
    for (const TreeEntry& e : tree) {
        json j{{"path", bytes_to_json(e.path)}, {"type", kind_name(e.kind)}, {"mode", e.mode}, {"mtime", e.mtime}};
        if (e.kind == TreeEntry::Kind::file) {
            j["size"] = e.size;
            j["sha256"] = net::to_hex(e.sha);
        }
        if (e.kind == TreeEntry::Kind::symlink) j["target"] = bytes_to_json(e.target);
        if (e.uid) j["uid"] = *e.uid;
        if (e.gid) j["gid"] = *e.gid;
        out.push_back(std::move(j));
    }
    return out;
}

void check_tree(const std::vector<TreeEntry>& tree, std::uint64_t message_size) {
    if (tree.size() > max_tree_entries) {
        throw InputError("tree: more than " + std::to_string(max_tree_entries) + " entries");
    }
    std::set<std::string_view> paths, leaves;  // leaves: files and symlinks, nothing may lie beneath
    std::uint64_t total = 0;
    std::size_t text = 0;
    for (const TreeEntry& e : tree) {
        if (!clean_path(e.path)) throw InputError("tree: '" + shown(e.path) + "' is not a clean relative path");
        if (e.mode > 0777) throw InputError("tree: '" + shown(e.path) + "': a mode has only permission bits (0 to 0777)");
        if (!paths.insert(e.path).second) throw InputError("tree: '" + shown(e.path) + "' is listed twice");
        if (e.kind != TreeEntry::Kind::dir) leaves.insert(e.path);
        if (e.kind == TreeEntry::Kind::symlink &&
            (e.target.empty() || e.target.size() > 4095 || e.target.find('\0') != std::string::npos)) {
            throw InputError("tree: the link '" + shown(e.path) + "' has an empty or invalid target");
        }
        if (e.kind == TreeEntry::Kind::file) {
            if (e.size > message_size - std::min(total, message_size)) {
                throw InputError("tree: the files add up to more than the message's " + std::to_string(message_size) +
                                 " bytes");
            }
            total += e.size;
        }
        text += e.path.size() + e.target.size();
        if (text > max_tree_text) throw InputError("tree: more than " + std::to_string(max_tree_text) + " bytes of paths");
    }
    if (total != message_size) {
        throw InputError("tree: the files add up to " + std::to_string(total) + " bytes, the message has " +
                         std::to_string(message_size));
    }
    for (const TreeEntry& e : tree) {
        for (std::size_t slash = e.path.find('/'); slash != std::string::npos; slash = e.path.find('/', slash + 1)) {
            if (leaves.count(std::string_view(e.path).substr(0, slash))) {
                throw InputError("tree: '" + shown(e.path) + "' lies beneath a file or link of the same tree");
            }
        }
    }
}

std::vector<TreeEntry> tree_from_json(const json& j, std::uint64_t message_size) {
    if (!j.is_array()) throw InputError("tree: expected a list");
    if (j.size() > max_tree_entries) throw InputError("tree: more than " + std::to_string(max_tree_entries) + " entries");
    const auto text = [](const json& o, const char* key) -> std::string {
        const auto it = o.find(key);
        if (it == o.end() || !it->is_string()) throw InputError(std::string("tree: '") + key + "' must be a string");
        return it->get<std::string>();
    };
    const auto count = [](const json& o, const char* key) -> std::uint64_t {
        const auto it = o.find(key);
        if (it == o.end() || !it->is_number_unsigned()) {
            throw InputError(std::string("tree: '") + key + "' must be a non-negative integer");
        }
        return it->get<std::uint64_t>();
    };
    const auto id = [&](const json& o, const char* key) -> std::optional<std::uint32_t> {
        if (!o.contains(key)) return std::nullopt;
        const std::uint64_t v = count(o, key);
        if (v > 0xffffffffu - 1) throw InputError(std::string("tree: '") + key + "' out of range");
        return static_cast<std::uint32_t>(v);
    };
    std::vector<TreeEntry> tree;
    tree.reserve(j.size());
    for (const json& o : j) {
        if (!o.is_object()) throw InputError("tree: an entry must be an object");
        TreeEntry e;
        if (!o.contains("path")) throw InputError("tree: an entry has no 'path'");
        e.path = bytes_from_json(o["path"], "tree: 'path'");
        const std::string type = text(o, "type");
        if (type == "file") {
            e.kind = TreeEntry::Kind::file;
            e.size = count(o, "size");
            e.sha = digest_from_hex(text(o, "sha256"));
        } else if (type == "dir") {
            e.kind = TreeEntry::Kind::dir;
        } else if (type == "link") {
            e.kind = TreeEntry::Kind::symlink;
            if (!o.contains("target")) throw InputError("tree: a link has no 'target'");
            e.target = bytes_from_json(o["target"], "tree: 'target'");
        } else {
            throw InputError("tree: an entry's type must be file, dir or link");
        }
        const std::uint64_t mode = count(o, "mode");
        if (mode > 0777) throw InputError("tree: a mode has only permission bits (0 to 0777)");
        e.mode = static_cast<unsigned>(mode);
        const auto mt = o.find("mtime");
        if (mt == o.end() || !mt->is_number_integer()) throw InputError("tree: 'mtime' must be an integer");
        e.mtime = mt->get<std::int64_t>();
        e.uid = id(o, "uid");
        e.gid = id(o, "gid");
        tree.push_back(std::move(e));
    }
    check_tree(tree, message_size);
    return tree;
}

TreeCounts count_tree(const std::vector<TreeEntry>& tree) {
    TreeCounts c;
    for (const TreeEntry& e : tree) {
        if (e.kind == TreeEntry::Kind::file) {
            ++c.files;
            c.bytes += e.size;
        } else if (e.kind == TreeEntry::Kind::dir) {
            ++c.dirs;
        } else {
            ++c.links;
        }
    }
    return c;
}

InFlight in_flight(const std::vector<TreeEntry>& tree, std::uint64_t bytes) {
    InFlight f;
    std::uint64_t end = 0;
    bool found = false;
    for (const TreeEntry& e : tree) {
        if (e.kind != TreeEntry::Kind::file) continue;
        end += e.size;
        if (!found) {
            f.index = f.files;
            f.path = e.path;
            found = end > bytes;
        }
        ++f.files;
    }
    return f;
}

// --- the source: walking the arguments ---------------------------------------------------
namespace {

struct Walk {
    const TreeOptions& options;
    BuiltTree out;
    std::map<std::string, std::string> landed;  // path → the source it comes from

    void add(const std::string& rel, const fs::path& source, const struct stat& st) {
        TreeEntry e;
        e.path = rel;
        if (S_ISREG(st.st_mode)) {
            e.kind = TreeEntry::Kind::file;
            e.size = static_cast<std::uint64_t>(st.st_size);
        } else if (S_ISDIR(st.st_mode)) {
            e.kind = TreeEntry::Kind::dir;
        } else if (S_ISLNK(st.st_mode)) {
            e.kind = TreeEntry::Kind::symlink;
            std::error_code ec;
            e.target = fs::read_symlink(source, ec).string();
            if (ec) throw InputError("cannot read the link '" + source.string() + "': " + ec.message());
            if (e.target.empty()) throw InputError("the link '" + source.string() + "' is empty");
        } else {
            const char* what = S_ISFIFO(st.st_mode) ? "a fifo" : S_ISSOCK(st.st_mode) ? "a socket" : "a device";
            throw InputError("'" + source.string() + "' is " + what +
                             " (only files, directories and symbolic links are pushed)");
        }
        e.mode = static_cast<unsigned>(st.st_mode) & 0777;
        e.mtime = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
        if (options.owner) {
            e.uid = st.st_uid;
            e.gid = st.st_gid;
        }
        if (const auto [it, fresh] = landed.emplace(rel, source.string()); !fresh) {
            throw InputError("'" + it->second + "' and '" + source.string() + "' would both land at '" + rel + "'");
        }
        if (out.entries.size() >= max_tree_entries) {
            throw InputError("more than " + std::to_string(max_tree_entries) + " entries in one push");
        }
        out.entries.push_back(std::move(e));
        out.sources.push_back(source);
    }

    void walk(const std::string& rel, const fs::path& dir) {
        DIR* d = ::opendir(dir.c_str());
        if (!d) throw InputError("cannot read the directory '" + dir.string() + "': " + errno_text());
        std::vector<std::string> names;
        errno = 0;
        while (const dirent* de = ::readdir(d)) {
            const std::string n = de->d_name;
            if (n != "." && n != "..") names.push_back(n);
        }
        const int err = errno;
        ::closedir(d);
        if (err != 0) throw InputError("cannot read the directory '" + dir.string() + "': " + std::strerror(err));
        std::sort(names.begin(), names.end());
        for (const auto& n : names) {
            const fs::path p = dir / n;
            struct stat st {};
            if (::lstat(p.c_str(), &st) != 0) throw InputError("'" + p.string() + "': " + errno_text());
            add(rel + "/" + n, p, st);
            if (S_ISDIR(st.st_mode)) walk(rel + "/" + n, p);
        }
    }
};

}  // namespace

BuiltTree build_tree(const std::vector<std::string>& args, const TreeOptions& options) {
    Walk w{options, {}, {}};
    for (const auto& arg : args) {
        fs::path p = fs::path(arg).lexically_normal();
        if (!p.is_absolute()) throw InputError("'" + arg + "' is not an absolute path");
        if (!p.has_filename()) p = p.parent_path();  // "dir/": the directory itself, as scp -r
        const std::string base = p.filename().string();
        if (base.empty() || base == "." || base == "..") throw InputError("'" + arg + "' has no name to land under");
        struct stat st {};
        // An argument that is a symlink is followed (scp, pdcp, cp -H); links inside are not.
        if (::stat(p.c_str(), &st) != 0) throw InputError("'" + arg + "': " + errno_text());
        if (S_ISDIR(st.st_mode) && !options.recursive) throw InputError("'" + arg + "' is a directory (use -r)");
        struct stat lst {};
        if (::lstat(p.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
            std::error_code ec;
            p = fs::canonical(p, ec);  // files are opened without following a link
            if (ec) throw InputError("'" + arg + "': " + ec.message());
        }
        w.add(base, p, st);
        if (S_ISDIR(st.st_mode)) w.walk(base, p);
    }
    // A path beneath a file or link of another source (a/x the file, -r b with b/x/y).
    std::set<std::string_view> leaves;
    for (const auto& e : w.out.entries) {
        if (e.kind != TreeEntry::Kind::dir) leaves.insert(e.path);
    }
    for (std::size_t i = 0; i < w.out.entries.size(); ++i) {
        const std::string& path = w.out.entries[i].path;
        for (std::size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1)) {
            const std::string up = path.substr(0, slash);
            if (leaves.count(up)) {
                throw InputError("'" + w.landed.at(up) + "' and '" + w.out.sources[i].string() +
                                 "' would both land at '" + up + "'");
            }
        }
    }
    // The manifest's order is the bundle's: by path.
    std::vector<std::size_t> order(w.out.entries.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return w.out.entries[a].path < w.out.entries[b].path; });
    BuiltTree sorted;
    for (const std::size_t i : order) {
        sorted.entries.push_back(std::move(w.out.entries[i]));
        sorted.sources.push_back(std::move(w.out.sources[i]));
    }
    return sorted;
}

// --- the source: streaming the files -------------------------------------------------------
namespace {

/// One file of a tree, opened as its entry says: no symlink followed at its last component
/// (a top-level argument was resolved when walked), served, a regular file of the size walked.
std::shared_ptr<int> open_member(const fs::path& source, const TreeEntry& e, const std::vector<fs::path>* roots) {
    const int fd = ::open(source.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) throw InputError("cannot read '" + source.string() + "': " + errno_text());
    auto owned = own_fd(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) != e.size) {
        throw InputError("'" + source.string() + "' changed while the push was prepared");
    }
    if (roots) served(fd, source, *roots);
    return owned;
}

struct Layout {
    std::vector<std::size_t> files;      // entry index of each file, in bundle order
    std::vector<std::uint64_t> offsets;  // where each starts in the bundle
};

Layout layout_of(const std::vector<TreeEntry>& entries) {
    Layout l;
    std::uint64_t at = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (entries[i].kind != TreeEntry::Kind::file || entries[i].size == 0) continue;
        l.files.push_back(i);
        l.offsets.push_back(at);
        at += entries[i].size;
    }
    return l;
}

class TreeReader final : public net::MessageBody::Reader {
public:
    TreeReader(std::shared_ptr<const BuiltTree> tree, std::shared_ptr<const std::vector<fs::path>> roots,
               std::uint64_t size)
        : tree_(std::move(tree)), roots_(std::move(roots)), layout_(layout_of(tree_->entries)), size_(size) {}

    std::size_t read(std::span<std::byte> out) override {
        if (pos_ >= size_ || out.empty()) return 0;
        const auto k = static_cast<std::size_t>(
            std::upper_bound(layout_.offsets.begin(), layout_.offsets.end(), pos_) - layout_.offsets.begin() - 1);
        const std::size_t entry = layout_.files[k];
        const TreeEntry& e = tree_->entries[entry];
        if (open_ != k || !fd_) {
            fd_.reset();  // one descriptor at a time, whatever the tree's size
            try {
                fd_ = open_member(tree_->sources[entry], e, roots_.get());
            } catch (const InputError& x) {
                throw Error(x.what());
            }
            open_ = k;
        }
        const std::uint64_t in = pos_ - layout_.offsets[k];
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), e.size - in));
        ssize_t n;
        do {
            n = ::pread(*fd_, out.data(), want, static_cast<off_t>(in));
        } while (n < 0 && errno == EINTR);
        if (n <= 0) {
            throw Error("cannot read " + tree_->sources[entry].string() + ": " + (n < 0 ? errno_text() : "the file is shorter"));
        }
        pos_ += static_cast<std::uint64_t>(n);
        return static_cast<std::size_t>(n);
    }
    void skip(std::size_t n) override { pos_ = std::min<std::uint64_t>(size_, pos_ + n); }

private:
    std::shared_ptr<const BuiltTree> tree_;
    std::shared_ptr<const std::vector<fs::path>> roots_;
    Layout layout_;
    std::uint64_t size_;
    std::uint64_t pos_ = 0;
    std::size_t open_ = 0;
    std::shared_ptr<int> fd_;
};

}  // namespace

TreeBody::TreeBody(BuiltTree tree, const std::vector<fs::path>* serve_roots) {
    if (serve_roots) roots_ = std::make_shared<const std::vector<fs::path>>(*serve_roots);
    net::Sha256 whole;
    std::vector<std::byte> buf(std::size_t{1} << 20);
    for (std::size_t i = 0; i < tree.entries.size(); ++i) {
        TreeEntry& e = tree.entries[i];
        if (e.kind != TreeEntry::Kind::file) continue;
        const auto fd = open_member(tree.sources[i], e, roots_.get());
        net::Sha256 own;
        std::uint64_t at = 0;
        while (at < e.size) {
            const ssize_t n = ::pread(*fd, buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), e.size - at)),
                                      static_cast<off_t>(at));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) throw InputError("cannot read '" + tree.sources[i].string() + "': " +
                                         (n < 0 ? errno_text() : "it shrank while the push was prepared"));
            const std::span<const std::byte> got(buf.data(), static_cast<std::size_t>(n));
            own.update(got);
            whole.update(got);
            at += static_cast<std::uint64_t>(n);
        }
        e.sha = own.finish();
        size_ += e.size;
    }
    sha_ = whole.finish();
    tree_ = std::make_shared<const BuiltTree>(std::move(tree));
}

std::unique_ptr<net::MessageBody::Reader> TreeBody::open() const {
    return std::make_unique<TreeReader>(tree_, roots_, size_);
}

}  // namespace hetcast
