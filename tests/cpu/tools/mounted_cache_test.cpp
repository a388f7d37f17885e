// Cache files on file systems that refuse writes, as containers and small disks give them: on a
// read-only mount the file is used read-only (the kernels in it are found; new ones are not kept,
// which `cache build` says with exit 1), and on a full disk `cache build` exits 1 while the file
// stays a sound cache of what fit. The mounts are made in a mount namespace of this process
// only; where it may not make one (no CAP_SYS_ADMIN), the tests skip.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

// A tmpfs of `size` mounted at `path` for the scope, in this process's own mount namespace.
class ScopedTmpfs {
 public:
  ScopedTmpfs(const std::string& path, const std::string& size) : path_(path) {
    std::filesystem::create_directories(path);
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("tmpfs", path.c_str(), "tmpfs", 0, ("size=" + size).c_str()) != 0) {
      why_not_ = std::strerror(errno);
      return;
    }
    mounted_ = true;
  }
  ~ScopedTmpfs() {
    if (mounted_) umount2(path_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& why_not() const { return why_not_; }
  bool remount_read_only() {
    return mount(nullptr, path_.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  }

 private:
  std::string path_;
  bool mounted_ = false;
  std::string why_not_;
};

TEST(MountedCache, ReadOnlyMountIsUsedReadOnly) {
  TempDir dir;
  const std::string good = dir.file("good.sqlite");
  const nlohmann::json built = build_small_cache(dir, good);
  ASSERT_FALSE(built.is_null());
  const int kernels = built.at("kernels").get<int>();
  ScopedTmpfs mount_point(dir.file("mnt"), "64m");
  if (!mount_point.mounted()) GTEST_SKIP() << "cannot mount a tmpfs: " << mount_point.why_not();
  const std::string db = dir.file("mnt/cache.sqlite");
  std::filesystem::copy_file(good, db);
  ASSERT_TRUE(mount_point.remount_read_only());

  const CliResult ls = run_cli({"cache", "ls", "--json", "--cache", db});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(static_cast<int>(ls.json().size()), kernels);
  const CliResult verify = run_cli({"cache", "verify", "--cache", db});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  const std::string deployment = write_small_deployment(dir, {"swa", "csa"});
  const CliResult again = run_cli(
      {"cache", "build", "--deployment", deployment, "--arch", "sm_90a", "--json", "--cache", db});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.json().at("cached").get<int>(), kernels) << again.out;
  const CliResult other =
      run_cli({"cache", "build", "--deployment", deployment, "--arch", "sm_100a", "--cache", db});
  EXPECT_EQ(other.exit_code, 1) << other.err;
  EXPECT_NE(other.err.find("not kept in the cache"), std::string::npos) << other.err;
}

TEST(MountedCache, FullDiskFailsTheBuildAndLeavesASoundFile) {
  TempDir dir;
  ScopedTmpfs mount_point(dir.file("mnt"), "160k");
  if (!mount_point.mounted()) GTEST_SKIP() << "cannot mount a tmpfs: " << mount_point.why_not();
  const std::string db = dir.file("mnt/cache.sqlite");
  const std::string deployment = write_small_deployment(dir, {"swa", "csa"});
  const CliResult build = run_cli({"cache", "build", "--deployment", deployment, "--arch",
                                   "sm_90a,sm_100a", "--json", "--cache", db});
  EXPECT_EQ(build.exit_code, 1) << build.err;
  EXPECT_FALSE(build.json().at("persistent").get<bool>()) << build.out;
  EXPECT_NE(build.err.find("not kept in the cache"), std::string::npos) << build.err;
  const CliResult verify = run_cli({"cache", "verify", "--cache", db});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

}  // namespace
}  // namespace smla::cli_test
