// Landing a verified bundle as a tree beneath a destination root (tree.hpp land_tree).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "hetcast/error.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/tree.hpp"

namespace hetcast {
namespace fs = std::filesystem;

namespace {

std::string errno_text() { return std::strerror(errno); }

struct Lander {
    const fs::path& root;
    std::string landing;  // "" for root itself, else "x/y/"
    const LandOptions& options;
    std::vector<LandFailure> failed;

    fs::path rel(const std::string& path) const { return fs::path(landing + path); }

    unsigned mode_of(const TreeEntry& e) const { return e.mode & 0777 & (options.preserve ? 0777u : ~options.umask); }

    /// Files carved and verified, waiting to be made durable together and renamed.
    std::vector<std::pair<const TreeEntry*, std::unique_ptr<FileSink>>> carved;
    std::set<std::string> parents;  // directories whose entries changed: fsynced at the end

    /// The last directory reached beneath root: entries come sorted by path, so files of one
    /// directory follow each other and it is walked to once, not once per file. One
    /// descriptor kept, whatever the tree's size.
    std::pair<fs::path, std::shared_ptr<int>> last_dir;
    std::shared_ptr<int> directory(const fs::path& relative) {
        if (!last_dir.second || last_dir.first != relative) last_dir = {relative, confined_directory(root, relative)};
        return last_dir.second;
    }

    void file(const TreeEntry& e, int bundle, std::uint64_t offset) {
        const fs::path final_path = confine(root, landing + e.path);
        auto owned = std::make_unique<FileSink>(final_path, e.size, directory(rel(e.path).parent_path()));
        FileSink& sink = *owned;
        std::vector<std::byte> buf(static_cast<std::size_t>(std::min<std::uint64_t>(e.size, std::uint64_t{1} << 20)));
        for (std::uint64_t at = 0; at < e.size;) {
            const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), e.size - at));
            const ssize_t n = ::pread(bundle, buf.data(), want, static_cast<off_t>(offset + at));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) throw Error("cannot read the received bundle: " + (n < 0 ? errno_text() : std::string("it is shorter")));
            sink.write(std::span<const std::byte>(buf.data(), static_cast<std::size_t>(n)));
            at += static_cast<std::uint64_t>(n);
        }
        sink.verify(e.sha);
        sink.set_mode(mode_of(e), 0);
        if (options.preserve) sink.set_mtime(e.mtime);
        if (options.owner && e.uid && e.gid) sink.set_owner(*e.uid, *e.gid);
        carved.emplace_back(&e, std::move(owned));
    }

    /// One syncfs per file system instead of an fsync per file (each a journal commit),
    /// then the renames; the directories are fsynced once each at the end.
    void land_carved() {
        std::set<dev_t> synced;
        for (const auto& [e, sink] : carved) {
            struct stat st {};
            if (::fstat(*sink->descriptor(), &st) == 0 && synced.insert(st.st_dev).second) {
                ::syncfs(*sink->descriptor());
            }
        }
        for (auto& item : carved) {
            // Not a structured binding: clang 14 (scripts/fuzz) cannot capture those.
            const auto& e = item.first;
            auto& sink = item.second;
            attempt(*e, [&] {
                sink->land(false);
                parents.insert(rel(e->path).parent_path().string());
            });
        }
        carved.clear();  // closes the descriptors
    }

    void sync_parents() {
        for (const auto& p : parents) {
            try {
                ::fsync(*confined_directory(root, p));
            } catch (const std::exception&) {
                // It held files a moment ago; each of them landed or failed on its own.
            }
        }
    }

    /// The link's parent reached beneath root; the link made under a temporary name and
    /// renamed over the final one, so no existing name is followed or left half-made.
    void link(const TreeEntry& e) {
        const fs::path path = rel(e.path);
        const auto dir = directory(path.parent_path());
        const std::string name = path.filename().string();
        const std::string tmp = temp_name(name, temp_tag());
        if (::symlinkat(e.target.c_str(), *dir, tmp.c_str()) != 0) {
            throw Error("cannot create the link " + (root / path).string() + ": " + errno_text());
        }
        std::string why;
        if (options.owner && e.uid && e.gid && ::fchownat(*dir, tmp.c_str(), *e.uid, *e.gid, AT_SYMLINK_NOFOLLOW) != 0) {
            why = "cannot set its owner: " + errno_text();
        }
        if (why.empty() && options.preserve) {
            const timespec times[2] = {{0, UTIME_OMIT}, to_timespec(e.mtime)};
            if (::utimensat(*dir, tmp.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) why = "cannot set its mtime: " + errno_text();
        }
        if (why.empty() && ::renameat(*dir, tmp.c_str(), *dir, name.c_str()) != 0) {
            why = errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST ? "a directory is in the way" : errno_text();
        }
        if (!why.empty()) {
            ::unlinkat(*dir, tmp.c_str(), 0);
            throw Error("cannot land the link " + (root / path).string() + ": " + why);
        }
        parents.insert(path.parent_path().string());
    }

    void dir_attributes(const TreeEntry& e) {
        const auto dir = confined_directory(root, rel(e.path));
        if (options.owner && e.uid && e.gid && ::fchown(*dir, *e.uid, *e.gid) != 0) {
            throw Error("cannot set the owner of " + (root / rel(e.path)).string() + ": " + errno_text());
        }
        if (::fchmod(*dir, mode_of(e)) != 0) {
            throw Error("cannot set the mode of " + (root / rel(e.path)).string() + ": " + errno_text());
        }
        if (options.preserve) {
            const timespec times[2] = {{0, UTIME_OMIT}, to_timespec(e.mtime)};
            if (::futimens(*dir, times) != 0) {
                throw Error("cannot set the mtime of " + (root / rel(e.path)).string() + ": " + errno_text());
            }
        }
    }

    /// Runs one entry's step; a failure is that entry's alone.
    template <class F>
    void attempt(const TreeEntry& e, F&& step) {
        try {
            step();
        } catch (const std::exception& x) {
            failed.push_back({e.path, x.what()});
        }
    }
};

bool beneath_failed(const std::string& path, const std::vector<LandFailure>& failed) {
    return std::any_of(failed.begin(), failed.end(), [&](const LandFailure& f) {
        return path.size() > f.path.size() && path.compare(0, f.path.size(), f.path) == 0 && path[f.path.size()] == '/';
    });
}

}  // namespace

std::vector<LandFailure> land_tree(const fs::path& root, const std::string& landing, const std::vector<TreeEntry>& tree,
                                   int bundle, const LandOptions& options) {
    Lander l{root, landing.empty() || landing == "." ? std::string() : landing + "/", options, {}, {}, {}, {}};
    if (!l.landing.empty()) (void)confine(root, landing);  // refuses an escaping landing directory
    using Kind = TreeEntry::Kind;
    // Directories first (by path, so parents come before children), empty ones too.
    for (const TreeEntry& e : tree) {
        if (e.kind != Kind::dir) continue;
        l.attempt(e, [&] {
            (void)confined_directory(root, l.rel(e.path));
            l.parents.insert(l.rel(e.path).parent_path().string());
        });
    }
    std::uint64_t offset = 0;
    for (const TreeEntry& e : tree) {
        if (e.kind != Kind::file) continue;
        const std::uint64_t at = offset;
        offset += e.size;
        if (beneath_failed(e.path, l.failed)) {
            l.failed.push_back({e.path, "its directory did not land"});
            continue;
        }
        l.attempt(e, [&] { l.file(e, bundle, at); });
        if (l.carved.size() >= 64) l.land_carved();  // bounded: 64 descriptors open at most
    }
    l.land_carved();
    for (const TreeEntry& e : tree) {
        if (e.kind != Kind::symlink) continue;
        if (beneath_failed(e.path, l.failed)) {
            l.failed.push_back({e.path, "its directory did not land"});
            continue;
        }
        l.attempt(e, [&] { l.link(e); });
    }
    // Modes and mtimes of directories last, deepest first: landing in a directory changes
    // its mtime, and a read-only one could not be landed in.
    std::vector<const TreeEntry*> dirs;
    for (const TreeEntry& e : tree) {
        if (e.kind == Kind::dir) dirs.push_back(&e);
    }
    std::stable_sort(dirs.begin(), dirs.end(), [](const TreeEntry* a, const TreeEntry* b) {
        return std::count(a->path.begin(), a->path.end(), '/') > std::count(b->path.begin(), b->path.end(), '/');
    });
    for (const TreeEntry* e : dirs) {
        if (std::any_of(l.failed.begin(), l.failed.end(), [&](const LandFailure& f) { return f.path == e->path; })) continue;
        l.attempt(*e, [&] { l.dir_attributes(*e); });
    }
    l.sync_parents();
    return l.failed;
}

std::string land_failures_text(const std::vector<LandFailure>& failed, std::size_t entries) {
    std::string out = std::to_string(failed.size()) + " of " + std::to_string(entries) + " entries did not land: ";
    constexpr std::size_t shown = 3;
    for (std::size_t i = 0; i < failed.size() && i < shown; ++i) {
        out += (i ? "; '" : "'") + failed[i].path + "': " + failed[i].why;
    }
    if (failed.size() > shown) out += "; and " + std::to_string(failed.size() - shown) + " more";
    return out;
}

void check_landing(const fs::path& root, const std::string& landing, const std::vector<TreeEntry>& tree) {
    const std::string prefix = landing.empty() || landing == "." ? std::string() : landing + "/";
    if (!prefix.empty()) (void)confine(root, landing);
    for (const TreeEntry& e : tree) (void)confine(root, prefix + e.path);
}

fs::path bundle_path(const fs::path& root, const std::string& landing, const net::Digest& sha) {
    const fs::path dir = landing.empty() || landing == "." ? root : confine(root, landing);
    return dir / ("hetcast-bundle-" + net::to_hex(sha).substr(0, 16));
}

}  // namespace hetcast
