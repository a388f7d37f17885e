// `cache path` prints the file the cache commands work on: --cache, else $SMLA_CACHE, else
// $XDG_CACHE_HOME/smla/cache.sqlite, else ~/.cache/smla/cache.sqlite.
#include <gtest/gtest.h>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

void expect_path(const std::vector<std::string>& args, const CliOptions& options,
                 const std::string& expected) {
  const CliResult result = run_cli(args, options);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, expected + "\n");
}

TEST(CachePath, FollowsOptionThenEnvironment) {
  const CliOptions xdg{{{"SMLA_CACHE", "/env/cache.sqlite"}, {"XDG_CACHE_HOME", "/xdg"}}};
  {
    SCOPED_TRACE("--cache wins over the environment");
    expect_path({"cache", "path", "--cache", "/given/c.sqlite"}, xdg, "/given/c.sqlite");
  }
  {
    SCOPED_TRACE("SMLA_CACHE wins over the default");
    expect_path({"cache", "path"}, xdg, "/env/cache.sqlite");
  }
  {
    SCOPED_TRACE("XDG_CACHE_HOME");
    expect_path({"cache", "path"}, CliOptions{{{"XDG_CACHE_HOME", "/xdg"}}},
                "/xdg/smla/cache.sqlite");
  }
  {
    SCOPED_TRACE("HOME");
    expect_path({"cache", "path"}, CliOptions{{{"XDG_CACHE_HOME", ""}, {"HOME", "/home/u"}}},
                "/home/u/.cache/smla/cache.sqlite");
  }
  {
    SCOPED_TRACE("nothing to put a file in: memory only");
    const CliResult none =
        run_cli({"cache", "path"}, CliOptions{{{"XDG_CACHE_HOME", ""}, {"HOME", ""}}});
    EXPECT_EQ(none.exit_code, 2);  // nothing to print: it could not do what was asked
    EXPECT_NE(none.err.find("memory"), std::string::npos) << none.err;
  }
}

}  // namespace
}  // namespace smla::cli_test
