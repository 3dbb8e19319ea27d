// What the CLI announces of a file on the operator's disk (runtime/upload.hpp): one read gives
// the digests a member would compute of it, and the announcement survives the wire or is
// refused whole.
#include <doctest/doctest.h>

#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/pieces.hpp"
#include "hetcast/runtime/upload.hpp"
#include "temp_dir.hpp"

using namespace hetcast;

namespace {

std::vector<std::byte> read_all(const net::MessageBody& body) {
    std::vector<std::byte> out(body.size());
    auto r = body.open();
    std::size_t at = 0;
    while (const std::size_t n = r->read(std::span(out).subspan(at))) at += n;
    out.resize(at);
    return out;
}

}  // namespace

TEST_CASE("a local file is described as a member describes it: whole and per piece, in one read") {
    test::TempDir dir;
    const auto file = dir.path / "f.bin";
    std::vector<char> bytes(5 * 4096 + 123);
    std::mt19937 rng(7);
    for (auto& b : bytes) b = static_cast<char>(rng());
    std::ofstream(file, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::filesystem::permissions(file, std::filesystem::perms(0640));

    const LocalFile local = describe_local_file(file, 4096);
    const FileBody reference(file);
    CHECK(local.spec.size == bytes.size());
    CHECK(local.spec.sha == reference.sha256());
    CHECK(local.spec.pieces == piece_digests(reference, 4096));
    CHECK(local.spec.pieces.size() == 6);
    CHECK(local.spec.mode == 0640);
    CHECK(local.body->sha256() == reference.sha256());
    CHECK(read_all(*local.body) == read_all(reference));

    CHECK_THROWS_AS((void)describe_local_file(dir.path / "missing", 4096), InputError);
    CHECK_THROWS_AS((void)describe_local_file(dir.path, 4096), InputError);
}

TEST_CASE("an upload's announcement round-trips, and a bad one is refused") {
    test::TempDir dir;
    const auto file = dir.path / "f.bin";
    std::ofstream(file) << std::string(10000, 'x');
    const UploadSpec spec = describe_local_file(file, 4096).spec;
    const UploadSpec back = upload_from_json(to_json(spec));
    CHECK(back.size == spec.size);
    CHECK(back.sha == spec.sha);
    CHECK(back.pieces == spec.pieces);
    CHECK(back.mode == spec.mode);
    CHECK(back.mtime == spec.mtime);

    nlohmann::json j = to_json(spec);
    j["pieces"].erase(0);
    CHECK_THROWS_AS((void)upload_from_json(j), InputError);  // digests for another size
    j = to_json(spec);
    j["piece"] = 1000;
    CHECK_THROWS_AS((void)upload_from_json(j), InputError);  // under 4 KiB
    j = to_json(spec);
    j["sha256"] = "xyz";
    CHECK_THROWS_AS((void)upload_from_json(j), InputError);
    CHECK_THROWS_AS((void)upload_from_json(nlohmann::json::array()), InputError);
    // Its plan carries every digest twice in one frame: max_upload_pieces at most.
    for (const std::uint64_t n : {max_upload_pieces, max_upload_pieces + 1}) {
        j = to_json(spec);
        j["size"] = n * 4096;
        j["pieces"] = nlohmann::json::array();
        for (std::uint64_t i = 0; i < n; ++i) j["pieces"].push_back(std::string(64, '0'));
        if (n == max_upload_pieces) CHECK(upload_from_json(j).pieces.size() == n);
        else CHECK_THROWS_AS((void)upload_from_json(j), InputError);
    }
}
