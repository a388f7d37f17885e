// Bad input to `smla` is a clear message naming the problem and exit status 2 (a usage error or
// input the command cannot use; 1 is for work that failed), never a crash, and creates no cache
// file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

// Runs `args` (a --cache into `dir` is added) and expects a failure whose stderr names `what`.
void expect_error(const TempDir& dir, std::vector<std::string> args, const std::string& what) {
  const std::string db = dir.file("never-created.sqlite");
  args.insert(args.end(), {"--cache", db});
  const CliResult result = run_cli(args);
  EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
  EXPECT_NE(result.err.find(what), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(db));
}

std::string write_file(const TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir.file(name)) << text;
  return dir.file(name);
}

TEST(CacheErrors, NameTheProblem) {
  TempDir dir;
  {
    SCOPED_TRACE("unknown preset");
    expect_error(dir, {"cache", "build", "--preset", "dsv4-nano-tp8", "--arch", "sm_90a"},
                 "dsv4-nano-tp8");
    expect_error(dir, {"cache", "build", "--preset", "llama", "--arch", "sm_90a"}, "llama");
  }
  {
    SCOPED_TRACE("bad --arch");
    expect_error(dir, {"cache", "build", "--preset", "dsv4-flash-tp8", "--arch", "sm_90a,sm_80"},
                 "sm_80");
    expect_error(dir, {"cache", "export", "--dir", dir.file("out"), "--arch", "sm_89"}, "sm_89");
  }
  {
    SCOPED_TRACE("a mistyped command is named");
    expect_error(dir, {"tnue"}, "unknown command \"tnue\"");
    expect_error(dir, {"cache", "frob"}, "unknown command \"frob\"");
  }
  {
    SCOPED_TRACE("a negative size bound (it used to mean no bound)");
    expect_error(dir, {"cache", "gc", "--max-size=-5", "--cache", dir.file("c.sqlite")},
                 "--max-size: -5: must be >= 0");
  }
  {
    SCOPED_TRACE("missing deployment file");
    const std::string missing = dir.file("missing.json");
    expect_error(dir, {"cache", "build", "--deployment", missing, "--arch", "sm_90a"}, missing);
  }
  {
    SCOPED_TRACE("malformed JSON");
    const std::string path = write_file(dir, "malformed.json", "{\"heads\": 8, \"layers\": [");
    expect_error(dir, {"cache", "build", "--deployment", path, "--arch", "sm_90a"}, path);
  }
  {
    SCOPED_TRACE("a deployment file that is a directory (it aborted the process)");
    const std::string path = dir.file("a-directory.json");
    std::filesystem::create_directory(path);
    expect_error(dir, {"cache", "build", "--deployment", path, "--arch", "sm_90a"},
                 "not a regular file");
  }
  {
    SCOPED_TRACE("deployment fields that used to be narrowed or ignored");
    const std::string layers =
        R"("layers": [{"name": "swa", "sources": [{"page_size": 256, "width": 128}]}])";
    const std::pair<const char*, const char*> cases[] = {
        {R"("heads": 4294967304)", "heads = 4294967304: must be a 32-bit integer"},
        {R"("heads": 8.9)", "heads = 8.9: must be a 32-bit integer"},
        {R"("heads": true)", "heads = true: must be a 32-bit integer"},
        {R"("heads": 8, "has_sink": "yes")", "has_sink = \"yes\": must be true or false"},
        {R"("heads": 8, "kv_layuot": "bf16")", "unknown key \"kv_layuot\""},
        {R"("heads": 8, "max_rows": 1024)", "unknown key \"max_rows\""},
    };
    for (const auto& [fields, message] : cases) {
      SCOPED_TRACE(fields);
      const std::string path =
          write_file(dir, "fields.json", std::string("{") + fields + ", " + layers + "}");
      expect_error(dir, {"cache", "build", "--deployment", path, "--arch", "sm_90a"}, message);
    }
    const std::string per_layer = write_file(
        dir, "layer-key.json",
        R"({"heads": 8, "layers": [{"name": "swa", "kv_layout": "bf16", "sources": [{"page_size": 256, "width": 128}]}]})");
    expect_error(dir, {"cache", "build", "--deployment", per_layer, "--arch", "sm_90a"},
                 "layers[0]: unknown key \"kv_layout\"");
    const std::string width = write_file(
        dir, "width.json",
        R"({"heads": 8, "layers": [{"name": "swa", "sources": [{"page_size": 256, "width": 1.5}]}]})");
    expect_error(dir, {"cache", "build", "--deployment", width, "--arch", "sm_90a"},
                 "layers[0].sources[0].width = 1.5");
    // A file gives its own widths: --max-context was ignored for it.
    const std::string file = write_file(
        dir, "widths.json",
        R"({"heads": 8, "layers": [{"name": "swa", "sources": [{"page_size": 256, "width": 128}]}]})");
    expect_error(
        dir,
        {"cache", "build", "--deployment", file, "--max-context", "1048576", "--arch", "sm_90a"},
        "--max-context 1048576: sizes a preset's HCA width");
  }
  {
    SCOPED_TRACE("ls, stats and export of a file they cannot use (it looked empty)");
    const std::string not_a_cache = write_file(dir, "not-a-cache.sqlite", std::string(8192, 'x'));
    for (const char* command : {"ls", "stats", "export"}) {
      std::vector<std::string> args = {"cache", command, "--cache", not_a_cache};
      if (std::string(command) == "export") args.insert(args.end(), {"--dir", dir.file("out")});
      const CliResult result = run_cli(args);
      EXPECT_EQ(result.exit_code, 2) << command << "\n" << result.out << result.err;
      EXPECT_NE(result.err.find(not_a_cache + " is damaged (sqlite: file is not a database"),
                std::string::npos)
          << result.err;
    }
  }
  {
    SCOPED_TRACE("export of a cache file that does not exist creates none");
    expect_error(dir, {"cache", "export", "--dir", dir.file("exported")}, "no cache file");
    EXPECT_FALSE(std::filesystem::exists(dir.file("exported")));
  }
  {
    SCOPED_TRACE("a deployment without layers");
    const std::string path = write_file(dir, "no-layers.json", "{\"heads\": 8}");
    expect_error(dir, {"cache", "build", "--deployment", path, "--arch", "sm_90a"}, "layers");
  }
  {
    SCOPED_TRACE("a deployment the C API would reject");
    const std::string path = write_file(
        dir, "zero-heads.json",
        R"({"heads": 0, "layers": [{"name": "swa", "sources": [{"page_size": 256, "width": 128}]}]})");
    expect_error(dir, {"cache", "build", "--deployment", path, "--arch", "sm_90a"}, "num_heads");
  }
  {
    SCOPED_TRACE("no deployment");
    expect_error(dir, {"cache", "build", "--arch", "sm_90a"}, "--preset");
  }
  {
    SCOPED_TRACE("a preset and a deployment");
    expect_error(dir,
                 {"cache", "build", "--preset", "dsv4-flash-tp8", "--deployment", "x.json",
                  "--arch", "sm_90a"},
                 "excludes");
  }
  {
    SCOPED_TRACE("verify and gc of a cache file that does not exist");
    expect_error(dir, {"cache", "verify"}, "no cache file");
    expect_error(dir, {"cache", "gc", "--max-size", "0"}, "no cache file");
  }
  {
    SCOPED_TRACE("negative --jobs");
    expect_error(
        dir, {"cache", "build", "--preset", "dsv4-flash-tp8", "--arch", "sm_90a", "--jobs", "-1"},
        "--jobs");
  }
}

// Options out of range are refused before any device is touched, naming the option (the
// device-free commands too): --repeats 0 took the median of nothing, --iters 0 divided by zero,
// and NaN passed the range checks.
TEST(BenchErrors, OptionsOutOfRange) {
  const std::vector<std::vector<std::string>> cases = {
      {"bench", "--preset", "dsv4-flash-tp8", "--rows", "1", "--repeats", "0"},
      {"bench", "--preset", "dsv4-flash-tp8", "--rows", "1", "--iters", "0"},
      {"bench", "--preset", "dsv4-flash-tp8", "--rows", "0"},
      {"bench", "--preset", "dsv4-flash-tp8", "--rows", "1", "--pool-gb", "nan"},
      {"tune", "--preset", "dsv4-flash-tp8", "--margin", "nan"},
      {"check", "--preset", "dsv4-flash-tp8", "--rows", "0,-1"},
      {"tune", "--list", "--sources", "256:128", "--heads", "0"},
      {"tune", "--list", "--sources", "256:128x"},
      {"tune", "--list", "--sources", "0:0"},
      {"tune", "--list", "--preset", "dsv4-flash-tp8", "--layer", "bogus"},
      {"tune", "--list", "--preset", "dsv4-flash-tp8", "--layer", "csa,mla"},  // mla was ignored
      {"tune", "--list", "--sources", "4000000:64"},  // a page of 2 GiB: UNSUPPORTED, still 2
      {"bench", "--preset", "dsv4-flash-tp8", "--rows", "1,,2"},
      {"cache", "export", "--arch", ",", "--dir", "out"},  // took --dir as its value
  };
  const char* named[] = {"--repeats",
                         "--iters",
                         "--rows",
                         "--pool-gb",
                         "--margin",
                         "--rows",
                         "--heads",
                         "--sources",
                         "problem.sources[0].page_size = 0",
                         "--layer bogus (it has swa, csa, hca)",
                         "--layer mla (it has swa, csa, hca)",
                         "2 GiB",
                         "--rows: an empty item in \"1,,2\"",
                         "--arch: an empty item in \",\""};
  ASSERT_EQ(cases.size(), std::size(named));
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(named[i]);
    const CliResult result = run_cli(cases[i]);
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE((result.err + result.out).find(named[i]), std::string::npos) << result.err;
  }
}

// Paths are bytes: one that is not UTF-8 prints as U+FFFD in --json output (dump() threw, which
// aborted the process).
TEST(JsonOutput, BytesThatAreNotUtf8) {
  TempDir dir;
  const std::string path = dir.file("c\xff.sqlite");
  std::ofstream{path};  // an empty file is an empty cache
  const CliResult result = run_cli({"cache", "stats", "--json", "--cache", path});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json stats = nlohmann::json::parse(result.out);
  EXPECT_NE(stats.at("path").get<std::string>().find("c\xef\xbf\xbd.sqlite"), std::string::npos)
      << result.out;
}

// A file whose name starts like a preset's is still read as a file.
TEST(DeploymentFile, ANamePresetsStartWithIsAFile) {
  TempDir dir;
  const std::string path = dir.file("dsv4-mine.json");
  std::ofstream(path)
      << R"({"heads": 8, "layers": [{"name": "swa", "sources": [{"page_size": 256, "width": 128}]}]})";
  const CliResult result = run_cli({"tune", "--list", "--deployment", path});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("swa/qlen1 h8 packed"), std::string::npos) << result.out;
}

// A pool size out of range is refused before any device is touched.
TEST(BenchErrors, PoolSizeOutOfRange) {
  for (const char* gb : {"0", "-1", "65", "lots"}) {
    SCOPED_TRACE(gb);
    const CliResult result =
        run_cli({"bench", "--preset", "dsv4-flash-tp8", "--rows", "1", "--pool-gb", gb});
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE(result.err.find("--pool-gb"), std::string::npos) << result.err;
  }
}

}  // namespace
}  // namespace smla::cli_test
