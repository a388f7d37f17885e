// The C API: every entry point validates first, never lets an exception out, and records a
// thread-local message for smla_last_error().
#include <smla.h>

#include <new>
#include <string>

#include "runtime/context.h"
#include "runtime/validate.h"

struct smla_context {
  std::unique_ptr<smla::Context> impl;
};

namespace smla {

Context* context_of(smla_context* ctx) { return ctx ? ctx->impl.get() : nullptr; }

Status create_context_handle(const ContextSettings& settings, smla_context** ctx) {
  *ctx = nullptr;
  std::unique_ptr<Context> impl;
  SMLA_TRY(Context::create(settings, &impl));
  *ctx = new smla_context{std::move(impl)};
  return ok_status();
}

}  // namespace smla

namespace {

thread_local std::string last_error;

// Keeps the message of the last failing call: a later success does not erase it.
smla_status finish(const smla::Status& status) {
  if (!status.is_ok()) last_error = status.message();
  return status.code();
}

template <typename Body>
smla_status guarded(Body&& body) {
  try {
    return finish(body());
  } catch (const std::bad_alloc&) {
    return finish(smla::Status(SMLA_ERR_INTERNAL, "out of host memory"));
  } catch (const std::exception& e) {
    return finish(smla::error(SMLA_ERR_INTERNAL, "internal error: {}", e.what()));
  } catch (...) {
    return finish(smla::Status(SMLA_ERR_INTERNAL, "internal error"));
  }
}

smla::Status check_context(const smla_context* ctx) {
  if (ctx == nullptr || !ctx->impl) {
    return smla::Status(SMLA_ERR_INVALID_ARGUMENT,
                        "ctx = NULL: create one with smla_context_create");
  }
  return smla::ok_status();
}

}  // namespace

extern "C" {

void smla_options_init(smla_options* options) {
  if (options == nullptr) return;
  options->device = 0;
  options->cache_path = nullptr;
  options->system_cache_path = nullptr;
  options->jit = SMLA_JIT_ALLOW;
  options->log_level = SMLA_LOG_WARN;
  options->arch = nullptr;
  options->batch_variant = 0;
}

smla_status smla_context_create(const smla_options* options, smla_context** ctx) {
  return guarded([&]() -> smla::Status {
    if (ctx == nullptr)
      return smla::Status(SMLA_ERR_INVALID_ARGUMENT, "ctx = NULL: must point to a smla_context*");
    *ctx = nullptr;
    SMLA_TRY(smla::validate_options(options));
    std::unique_ptr<smla::Context> impl;
    SMLA_TRY(smla::Context::create(options, &impl));
    *ctx = new smla_context{std::move(impl)};
    return smla::ok_status();
  });
}

smla_status smla_context_destroy(smla_context* ctx) {
  return guarded([&]() -> smla::Status {
    delete ctx;
    return smla::ok_status();
  });
}

smla_status smla_prepare(smla_context* ctx, const smla_problem* problem, int max_rows,
                         size_t* workspace_bytes) {
  return guarded([&]() -> smla::Status {
    SMLA_TRY(check_context(ctx));
    SMLA_TRY(smla::validate_problem(problem));
    SMLA_TRY(smla::validate_max_rows(max_rows));
    if (workspace_bytes == nullptr) {
      return smla::Status(SMLA_ERR_INVALID_ARGUMENT,
                          "workspace_bytes = NULL: must point to a size_t");
    }
    return ctx->impl->prepare(*problem, max_rows, workspace_bytes);
  });
}

smla_status smla_decode(smla_context* ctx, const smla_problem* problem, const smla_args* args,
                        const smla_varlen* varlen, void* workspace, size_t workspace_bytes,
                        struct CUstream_st* stream) {
  return guarded([&]() -> smla::Status {
    SMLA_TRY(check_context(ctx));
    SMLA_TRY(smla::validate_problem(problem));
    SMLA_TRY(smla::validate_args(*problem, args, varlen));
    SMLA_TRY(smla::validate_workspace(workspace, workspace_bytes));
    return ctx->impl->decode(*problem, *args, varlen, workspace, workspace_bytes, stream);
  });
}

smla_status smla_prefill(smla_context* ctx, const smla_problem* problem, const smla_args* args,
                         const smla_varlen* varlen, void* workspace, size_t workspace_bytes,
                         struct CUstream_st* stream) {
  return guarded([&]() -> smla::Status {
    SMLA_TRY(check_context(ctx));
    SMLA_TRY(smla::validate_problem(problem));
    SMLA_TRY(smla::validate_args(*problem, args, varlen));
    SMLA_TRY(smla::require_varlen(varlen));
    SMLA_TRY(smla::validate_workspace(workspace, workspace_bytes));
    // NOTE: prefill runs the decode kernels, each row with its own lists or its own window and
    // prefix of its request's block tables.
    return ctx->impl->decode(*problem, *args, varlen, workspace, workspace_bytes, stream);
  });
}

const char* smla_version(void) { return SMLA_VERSION_STRING; }

const char* smla_status_string(smla_status status) {
  switch (status) {
    case SMLA_OK:
      return "SMLA_OK";
    case SMLA_ERR_INVALID_ARGUMENT:
      return "SMLA_ERR_INVALID_ARGUMENT";
    case SMLA_ERR_UNSUPPORTED:
      return "SMLA_ERR_UNSUPPORTED";
    case SMLA_ERR_NO_DEVICE:
      return "SMLA_ERR_NO_DEVICE";
    case SMLA_ERR_CUDA:
      return "SMLA_ERR_CUDA";
    case SMLA_ERR_COMPILE:
      return "SMLA_ERR_COMPILE";
    case SMLA_ERR_CACHE:
      return "SMLA_ERR_CACHE";
    case SMLA_ERR_WORKSPACE:
      return "SMLA_ERR_WORKSPACE";
    case SMLA_ERR_NOT_READY:
      return "SMLA_ERR_NOT_READY";
    case SMLA_ERR_INTERNAL:
      return "SMLA_ERR_INTERNAL";
  }
  return "unknown smla_status";
}

const char* smla_last_error(void) { return last_error.c_str(); }

}  // extern "C"
