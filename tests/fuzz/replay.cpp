// Replays inputs through a fuzz target without libFuzzer, so the normal build (g++) runs
// every seed and every past finding as a test (ctest fuzz-replay-*). Arguments: files or
// folders of inputs. A crash, a sanitizer report or a fuzz::finding fails it; a
// hetcast::Error is the target's own rejection.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    std::size_t n = 0;
    const auto run = [&](const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
        ++n;
    };
    for (int i = 1; i < argc; ++i) {
        const fs::path p = argv[i];
        if (fs::is_directory(p)) {
            for (const auto& e : fs::recursive_directory_iterator(p)) {
                if (e.is_regular_file()) run(e.path());
            }
        } else {
            run(p);
        }
    }
    std::printf("%zu inputs replayed\n", n);
    return n > 0 ? 0 : 1;
}
