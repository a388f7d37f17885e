// Bad input to `smla cache` is a clear message naming the problem and a nonzero exit status,
// never a crash, and creates no cache file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cpu/tools/cli_test_support.h"

namespace smla::cli_test {
namespace {

// Runs `args` (a --cache into `dir` is added) and expects a failure whose stderr names `what`.
void expect_error(const TempDir& dir, std::vector<std::string> args, const std::string& what) {
  const std::string db = dir.file("never-created.sqlite");
  args.insert(args.end(), {"--cache", db});
  const CliResult result = run_cli(args);
  EXPECT_GE(result.exit_code, 1) << result.out;
  EXPECT_LT(result.exit_code, 128) << "killed by a signal:\n" << result.err;
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

// A pool size out of range is refused before any device is touched.
TEST(BenchErrors, PoolSizeOutOfRange) {
  for (const char* gb : {"0", "-1", "65", "lots"}) {
    SCOPED_TRACE(gb);
    const CliResult result =
        run_cli({"bench", "--preset", "dsv4-flash-tp8", "--rows", "1", "--pool-gb", gb});
    EXPECT_GE(result.exit_code, 1) << result.out;
    EXPECT_LT(result.exit_code, 128) << "killed by a signal:\n" << result.err;
    EXPECT_NE(result.err.find("--pool-gb"), std::string::npos) << result.err;
  }
}

}  // namespace
}  // namespace smla::cli_test
