// What every `smla cache` subcommand shares: the cache file it works on (--cache PATH, else
// $SMLA_CACHE, else the default path) and a logger that honours SMLA_LOG.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cache/cubin_store.h"
#include "support/log.h"

namespace smla::tools {

class CacheFileOption {
 public:
  void add_to(CLI::App& command);
  // The file the command works on; "" means memory only (`--cache ""`, or no $HOME).
  std::string path() const;
  // The user cache only: these commands manage that file, so no system cache is layered in.
  // `file_status` as CubinStore::open says it.
  std::unique_ptr<CubinStore> open(const Logger& log, Status* file_status = nullptr) const;
  // For the commands that only read it: the file's store if the file exists (a read-only view
  // if this user may not write it), else an empty memory-only one after a warning (a mistyped
  // path creates nothing); null, after saying why on stderr (a damaged file with the remedy), if
  // the file exists but cannot be used (what it holds would look empty).
  std::unique_ptr<CubinStore> open_existing(const char* command, Logger& log) const;
  // OK unless SQLite finds the existing file's pages damaged (then the message names the
  // remedy): the reading commands check before they answer, since a listing reads only part of
  // the file and would look fine.
  Status damage() const;
  // Whether the file exists and this user may not write it: the read-only commands read it as
  // a system cache is read (immutable, creating nothing beside it).
  bool read_only() const;
  // The existing cache file's path, or "" after saying on stderr that there is none: `command`
  // must not create one (a mistyped path must not look like an empty cache).
  std::string existing_file(const char* command) const;
  // The store of an existing, usable cache file, or null after saying why on stderr.
  std::unique_ptr<CubinStore> open_usable(const char* command, Logger& log) const;

 private:
  // The existing file's store, after damage() and an opening that warns nothing: the commands
  // say why they cannot use the file themselves, once (what the store says later goes to `log`).
  // Null when the check fails; `file_status` as CubinStore::open says it otherwise.
  std::unique_ptr<CubinStore> open_checked(Logger& log, Status* file_status) const;

  std::string value_;
  CLI::Option* option_ = nullptr;
};

}  // namespace smla::tools
