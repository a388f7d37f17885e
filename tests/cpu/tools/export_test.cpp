// `cache export` writes each cached cubin of the selected archs to <id>.cubin, byte for byte,
// with an index.txt line `<file> <key text>` per cubin.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

std::map<std::string, std::string> read_index(const std::string& path) {
  std::map<std::string, std::string> keys_by_file;
  std::ifstream index(path);
  for (std::string line; std::getline(index, line);) {
    const size_t space = line.find(' ');
    keys_by_file[line.substr(0, space)] = line.substr(space + 1);
  }
  return keys_by_file;
}

TEST(CacheExport, WritesEveryCubinWithAnIndex) {
  TempDir dir;
  const std::string db = dir.file("cache.sqlite");
  ASSERT_FALSE(build_small_cache(dir, db).is_null());
  const nlohmann::json entries = run_cli({"cache", "ls", "--json", "--cache", db}).json();
  ASSERT_TRUE(entries.is_array());

  const std::string out = dir.file("cubins");
  const CliResult exported = run_cli({"cache", "export", "--dir", out, "--cache", db});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const std::map<std::string, std::string> index = read_index(out + "/index.txt");
  EXPECT_EQ(index.size(), entries.size());
  for (const nlohmann::json& e : entries) {
    const std::string file = e.at("id").get<std::string>() + ".cubin";
    SCOPED_TRACE(file);
    ASSERT_TRUE(std::filesystem::exists(out + "/" + file));
    EXPECT_EQ(static_cast<int64_t>(std::filesystem::file_size(out + "/" + file)),
              e.at("cubin_bytes").get<int64_t>());
    EXPECT_EQ(index.count(file) ? index.at(file) : "", e.at("key").get<std::string>());
    // An ELF image, as cuobjdump expects.
    EXPECT_EQ(read_file_bytes(out + "/" + file).substr(0, 4),
              "\x7f"
              "ELF");
  }
  {
    SCOPED_TRACE("--arch selects: nothing of sm_100a was built");
    const std::string other = dir.file("sm_100a");
    const CliResult none =
        run_cli({"cache", "export", "--arch", "sm_100a", "--dir", other, "--cache", db});
    EXPECT_EQ(none.exit_code, 0) << none.err;
    EXPECT_TRUE(read_index(other + "/index.txt").empty());
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(other),
                            std::filesystem::directory_iterator()),
              1);
  }
}

}  // namespace
}  // namespace smla::cli_test
