#include "runtime/context.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <optional>

#include "codegen/launch_params.h"
#include "codegen/names.h"
#include "runtime/validate.h"

namespace smla {
namespace {

// Makes `context` current for the scope unless it already is (the common case: the host's
// runtime API uses the same primary context), so decode calls do not pay for push/pop. A push
// that fails is the scope's status: nothing may be loaded or launched in whatever is current.
class ScopedCurrentContext {
 public:
  ScopedCurrentContext(const CudaDriver& driver, CUcontext context) : driver_(driver) {
    CUcontext current = nullptr;
    if (driver_.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context) return;
    status_ = driver_.check(driver_.cuCtxPushCurrent(context), "cuCtxPushCurrent");
    pushed_ = status_.is_ok();
  }
  ~ScopedCurrentContext() {
    CUcontext popped = nullptr;
    if (pushed_) driver_.cuCtxPopCurrent(&popped);
  }
  ScopedCurrentContext(const ScopedCurrentContext&) = delete;
  ScopedCurrentContext& operator=(const ScopedCurrentContext&) = delete;

  const Status& status() const { return status_; }

 private:
  const CudaDriver& driver_;
  Status status_;
  bool pushed_ = false;
};

// A kernel missing where compiling is forbidden, with the command that prepares it: the
// problem in a deployment file's fields, the arch, and the cache file this context reads.
Status with_build_hint(const Status& missing, const smla_problem& p, const ArchSpec& arch,
                       const std::string& cache_path) {
  std::string sources;
  for (int s = 0; s < p.num_sources; ++s) {
    const smla_source_desc& desc = p.sources[s];
    std::string kind;
    if (desc.kind != SMLA_SOURCE_LIST) {
      kind = fmt::format(", \"kind\": \"{}\"", source_kind_name(desc.kind));
    }
    if (desc.kind == SMLA_SOURCE_PREFIX) kind += fmt::format(", \"ratio\": {}", desc.ratio);
    sources += fmt::format("{}{{\"page_size\": {}, \"width\": {}{}}}", s > 0 ? ", " : "",
                           desc.page_size, desc.width, kind);
  }
  const std::string cache = cache_path.empty() ? "FILE" : cache_path;
  const std::string then =
      cache_path.empty() ? " and set SMLA_CACHE=FILE (this context's cache is memory only)" : "";
  return error(SMLA_ERR_NOT_READY,
               "{}; prepare it beforehand with `smla cache build --deployment DEPLOYMENT.json "
               "--arch {} --cache {}`{}, the deployment holding this problem: {{\"heads\": {}, "
               "\"q_dtype\": \"{}\", \"kv_layout\": \"{}\", \"has_sink\": {}, \"want_lse\": "
               "{}, \"q_lens\": [{}], \"layers\": [{{\"name\": \"layer\", \"sources\": [{}]}}]}} "
               "(or a preset that has it: `smla plan --preset NAME --arch {}` lists its kernels)",
               missing.message(), arch.name, cache, then, p.num_heads, dtype_name(p.q_dtype),
               layout_name(p.kv_layout), p.has_sink ? "true" : "false",
               p.want_lse ? "true" : "false", p.q_len, sources, arch.name);
}

}  // namespace

ProblemKey problem_key(const smla_problem& problem) {
  ProblemKey key{};
  key.fields[0] = problem.num_heads;
  key.fields[1] = problem.q_dtype;
  key.fields[2] = problem.kv_layout;
  key.fields[3] = problem.q_len;
  key.fields[4] = problem.num_sources;
  for (int s = 0; s < problem.num_sources; ++s) {
    key.fields[5 + 4 * s] = problem.sources[s].kind;
    key.fields[6 + 4 * s] = problem.sources[s].page_size;
    key.fields[7 + 4 * s] = problem.sources[s].width;
    key.fields[8 + 4 * s] = problem.sources[s].ratio;
  }
  key.fields[13] = (problem.has_sink ? 1 : 0) | (problem.want_lse ? 2 : 0);
  return key;
}

bool ProblemKey::operator==(const ProblemKey& other) const {
  return std::memcmp(fields, other.fields, sizeof(fields)) == 0;
}

size_t ProblemKeyHash::operator()(const ProblemKey& key) const {
  size_t hash = 1469598103934665603ull;
  for (int field : key.fields) hash = (hash ^ static_cast<size_t>(field)) * 1099511628211ull;
  return hash;
}

Status Context::create(const ContextSettings& settings, std::unique_ptr<Context>* result) {
  std::unique_ptr<Context> context(new Context());
  context->settings_ = settings;
  Logger& log = context->log_;
  log.set_level(settings.log_level);
  if (settings.plan.batch_variant) {
    log.info("batch-variant mode: calls of many rows may run faster kernels");
  }
  context->store_ = CubinStore::open(settings.store, context->log_);
  context->builder_ = std::make_unique<KernelBuilder>(*context->store_, context->log_);

  Status driver_status;
  context->driver_ = CudaDriver::get(&driver_status);
  int devices = 0;
  if (context->driver_ != nullptr) {
    driver_status =
        context->driver_->check(context->driver_->cuDeviceGetCount(&devices), "cuDeviceGetCount");
  }
  // A driver that is present but fails (cuInit, or counting the devices) is broken, not absent:
  // an error, unless the host named an arch to compile for without a device.
  if (driver_status.code() == SMLA_ERR_CUDA) {
    if (settings.arch.empty()) {
      return error(SMLA_ERR_CUDA, "{} (set options.arch to compile kernels without a device)",
                   driver_status.message());
    }
    context->log_.warn("no usable GPU: {}", driver_status.message());
  }
  if (devices > 0) {
    if (settings.device >= devices) {
      return error(SMLA_ERR_INVALID_ARGUMENT, "options.device = {}: this machine has {} device(s)",
                   settings.device, devices);
    }
    SMLA_TRY(context->open_device(settings.device));
    if (!settings.arch.empty() && settings.arch != context->arch_->name) {
      context->log_.warn("options.arch = {} ignored: device {} is {}", settings.arch,
                         settings.device, context->arch_->name);
    }
  } else {
    context->driver_ = nullptr;
    context->log_.info("no GPU ({}): compiling for {} only",
                       driver_status.is_ok() ? "no device" : driver_status.message(),
                       settings.arch.empty() ? "no architecture" : settings.arch);
    context->arch_ = find_arch(settings.arch);
  }
  *result = std::move(context);
  return ok_status();
}

Status Context::create(const smla_options* options, std::unique_ptr<Context>* result) {
  Logger log;
  ContextSettings settings;
  SMLA_TRY(context_settings(options, &log, &settings));
  return create(settings, result);
}

Status Context::open_device(int ordinal) {
  const CudaDriver& d = *driver_;
  SMLA_TRY(d.check(d.cuDeviceGet(&cu_device_, ordinal), "cuDeviceGet"));
  SMLA_TRY(read_device_info(d, cu_device_, ordinal, &device_));
  if (device_.arch == nullptr) {
    return error(SMLA_ERR_UNSUPPORTED,
                 "device {} ({}) has compute capability {}.{}; smla compiles for {}", ordinal,
                 device_.name, device_.major, device_.minor, arch_names());
  }
  SMLA_TRY(
      d.check(d.cuDevicePrimaryCtxRetain(&cu_context_, cu_device_), "cuDevicePrimaryCtxRetain"));
  arch_ = device_.arch;
  log_.info("device {}: {} ({}, {} SMs)", ordinal, device_.name, arch_->name, device_.sm_count);
  return ok_status();
}

Context::~Context() {
  if (driver_ == nullptr || cu_context_ == nullptr) return;  // nothing retained or loaded
  {
    ScopedCurrentContext current(*driver_, cu_context_);
    if (current.status()) {
      for (auto& entry : prepared_) unload(entry.second.get());
    } else if (!prepared_.empty()) {
      log_.warn("kernels not unloaded: {}", current.status().message());
    }
  }
  driver_->cuDevicePrimaryCtxRelease(cu_device_);
}

Status Context::load_kernel(const KernelKey& key, bool allow_compile, LoadedKernel* kernel) {
  BuildResult built;
  SMLA_TRY(builder_->build(key, allow_compile, &built));
  if (driver_ == nullptr) return ok_status();
  kernel->threads = key.threads();
  kernel->smem_bytes = key.smem_bytes();
  SMLA_TRY(driver_->check(driver_->cuModuleLoadData(&kernel->module, built.cubin.data()),
                          "cuModuleLoadData"));
  const std::vector<const char*> entry_points = key.entry_points();
  Status status = driver_->check(
      driver_->cuModuleGetFunction(&kernel->function, kernel->module, entry_points[0]),
      "cuModuleGetFunction");
  if (status && entry_points.size() > 1) {
    status = driver_->check(
        driver_->cuModuleGetFunction(&kernel->prefix_function, kernel->module, entry_points[1]),
        "cuModuleGetFunction(prefix combine)");
  }
  if (status && kernel->smem_bytes > 48 * 1024) {
    status = driver_->check(
        driver_->cuFuncSetAttribute(
            kernel->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, kernel->smem_bytes),
        "cuFuncSetAttribute(max dynamic shared memory)");
  }
  if (status) status = reserve_local_memory(key, kernel->function);
  if (!status) {
    driver_->cuModuleUnload(kernel->module);
    *kernel = LoadedKernel{};
  }
  return status;
}

// NOTE: a kernel whose local memory (stack frame) per thread exceeds the context's stack limit
// makes the driver grow the per-thread reservation at its first launch, allocating inside
// smla_decode (and failing there if memory ran out). Raising the limit here puts that
// allocation in smla_prepare, where the C API allows it. Only a process that lowered the
// limit below the kernel's needs (CUDA's default is 1 KiB; the wgmma kernel needs 512 bytes)
// pays: the reservation is the limit times the threads the device can hold.
Status Context::reserve_local_memory(const KernelKey& key, CUfunction function) {
  int local_bytes = 0;
  SMLA_TRY(driver_->check(
      driver_->cuFuncGetAttribute(&local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, function),
      "cuFuncGetAttribute(local size)"));
  if (local_bytes <= 0) return ok_status();
  size_t limit = 0;
  SMLA_TRY(driver_->check(driver_->cuCtxGetLimit(&limit, CU_LIMIT_STACK_SIZE),
                          "cuCtxGetLimit(stack size)"));
  if (limit >= static_cast<size_t>(local_bytes)) return ok_status();
  SMLA_TRY(driver_->check(driver_->cuCtxSetLimit(CU_LIMIT_STACK_SIZE, local_bytes),
                          "cuCtxSetLimit(stack size)"));
  log_.info("stack limit raised from {} to {} bytes a thread for {}", limit, local_bytes,
            key.text());
  return ok_status();
}

void Context::unload(KernelPair* pair) {
  for (LoadedKernel* kernel : {&pair->decode, &pair->combine}) {
    if (kernel->module) driver_->cuModuleUnload(kernel->module);
    *kernel = LoadedKernel{};
  }
}

void Context::unload(Prepared* prepared) {
  for (KernelPair& pair : prepared->kernels) unload(&pair);
}

Status Context::load_pair(const PlannedKernel& kernel, bool allow_compile, KernelPair* pair) {
  SMLA_TRY(load_kernel(kernel.decode, allow_compile, &pair->decode));
  if (!kernel.combine) return ok_status();
  Status status = load_kernel(*kernel.combine, allow_compile, &pair->combine);
  if (!status) unload(pair);
  return status;
}

Status Context::prepare_locked(const smla_problem& problem, bool allow_compile,
                               const Prepared** result) {
  if (const Prepared* found = find_prepared(problem)) {
    *result = found;
    return ok_status();
  }
  if (arch_ == nullptr) {
    return error(SMLA_ERR_NO_DEVICE, "no GPU, and no options.arch to compile kernels for");
  }
  // Every load, and every unload after a failed one, in the device's context.
  std::optional<ScopedCurrentContext> current;
  if (driver_ != nullptr) {
    current.emplace(*driver_, cu_context_);
    SMLA_TRY(current->status());
  }
  auto prepared = std::make_unique<Prepared>();
  SMLA_TRY(DecodePlan::build(*arch_, problem, settings_.plan,
                             loadable_tuned_tiles(problem, allow_compile), &prepared->plan));
  prepared->kernels.resize(prepared->plan->kernels().size());
  Status status;
  for (size_t i = 0; i < prepared->kernels.size() && status; ++i) {
    status = load_pair(prepared->plan->kernels()[i], allow_compile, &prepared->kernels[i]);
  }
  if (!status) {
    unload(prepared.get());
    if (status.code() != SMLA_ERR_NOT_READY) return status;
    return with_build_hint(status, problem, *arch_, settings_.store.path);
  }
  std::unique_lock<std::shared_mutex> lock(prepared_mutex_);
  auto inserted = prepared_.emplace(problem_key(problem), std::move(prepared));
  *result = inserted.first->second.get();
  return ok_status();
}

std::vector<TunedTile> Context::loadable_tuned_tiles(const smla_problem& problem,
                                                     bool allow_compile) {
  std::vector<TunedTile> loadable;
  if (driver_ == nullptr || !settings_.use_tuning || settings_.plan.forced_tile) return loadable;
  for (const TunedTile& tuned : find_tuned_tiles(*store_, device_.tuning_device(), *arch_, problem,
                                                 settings_.plan.batch_variant, log_)) {
    // Built (or found) here so that a row whose kernel cannot be had leaves its bucket to the
    // heuristic; the plan's load below finds it in memory.
    const DecodeKernel kernel = DecodeKernel::of(*arch_, problem, tuned.tile);
    BuildResult built;
    Status status = builder_->build(kernel, allow_compile, &built);
    if (status && kernel.geometry().segments > 1) {
      status = builder_->build(kernel.combine(), allow_compile, &built);
    }
    if (!status) {
      log_.warn("tuned tile {} for {}+ rows not loaded, the heuristic serves them: {}",
                tuned.tile.text(), tuned.bucket, status.message());
      continue;
    }
    loadable.push_back(tuned);
  }
  return loadable;
}

const Context::Prepared* Context::find_prepared(const smla_problem& problem) const {
  std::shared_lock<std::shared_mutex> lock(prepared_mutex_);
  const auto found = prepared_.find(problem_key(problem));
  return found == prepared_.end() ? nullptr : found->second.get();
}

const DecodePlan* Context::plan(const smla_problem& problem) const {
  const Prepared* prepared = find_prepared(problem);
  return prepared ? prepared->plan.get() : nullptr;
}

Status Context::prepare(const smla_problem& problem, int max_rows, size_t* workspace_bytes) {
  std::lock_guard<std::mutex> lock(prepare_mutex_);
  const Prepared* prepared = nullptr;
  SMLA_TRY(prepare_locked(problem, settings_.jit_allowed, &prepared));
  *workspace_bytes = prepared->plan->workspace_bytes(max_rows);
  return ok_status();
}

Status Context::decode(const smla_problem& problem, const smla_args& args,
                       const smla_varlen* varlen, void* workspace, size_t workspace_bytes,
                       CUstream stream) {
  if (args.num_rows == 0) return ok_status();
  if (driver_ == nullptr) return error(SMLA_ERR_NO_DEVICE, "no GPU: smla_decode needs a device");
  ScopedCurrentContext current(*driver_, cu_context_);
  SMLA_TRY(current.status());
  const Prepared* prepared = find_prepared(problem);
  if (prepared == nullptr) {
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    SMLA_TRY(driver_->check(driver_->cuStreamIsCapturing(stream, &capture), "cuStreamIsCapturing"));
    if (capture != CU_STREAM_CAPTURE_STATUS_NONE) {
      return error(
          SMLA_ERR_NOT_READY,
          "the stream is capturing and this problem was not prepared: call smla_prepare first");
    }
    std::lock_guard<std::mutex> lock(prepare_mutex_);
    SMLA_TRY(prepare_locked(problem, settings_.jit_allowed, &prepared));
  }
  return launch(*prepared, problem, args, varlen, workspace, workspace_bytes, stream);
}

Status Context::launch(const Prepared& prepared, const smla_problem& problem, const smla_args& args,
                       const smla_varlen* varlen, void* workspace, size_t workspace_bytes,
                       CUstream stream) {
  const PlannedCall call = prepared.plan->call(args.num_rows, workspace_bytes);
  const DecodeLaunch& plan = call.launch;
  if (plan.workspace_bytes > workspace_bytes) {
    return error(SMLA_ERR_WORKSPACE,
                 "workspace_bytes = {}: this call needs {} (smla_prepare returns the size)",
                 workspace_bytes, plan.workspace_bytes);
  }
  SMLA_TRY(validate_workspace_overlap(problem, args, workspace, plan.workspace_bytes, varlen));
  DecodeParams params{};
  params.num_rows = args.num_rows;
  params.split = plan.split ? 1 : 0;
  params.prefix_segments = plan.prefix_segments;
  params.folds = !plan.split || plan.prefix_segments > 1 ? 1 : 0;
  params.q = args.q;
  params.q_row_stride = args.q_row_stride;
  params.q_head_stride = args.q_head_stride;
  params.score_scale_log2 = static_cast<float>(score_scale(problem, args) * M_LOG2E);
  params.out_scale = problem.kv_layout == SMLA_KV_FP8_UNIFORM ? args.kv_scale : 1.0f;
  if (varlen) {
    params.num_requests = varlen->num_requests;
    params.cu_seqlens_q = varlen->device_cu_seqlens_q;
    params.kv_lens = varlen->device_kv_lens;
  }
  for (int s = 0; s < problem.num_sources; ++s) {
    const smla_source_args& src = args.sources[s];
    SourceParams& dst = params.sources[s];
    // NOTE: without pages every copy is a zero-byte one, whose source must still be a global
    // address: q stands in for a cache the caller may pass as NULL.
    dst.cache = static_cast<const unsigned char*>(src.num_pages > 0 ? src.cache : args.q);
    dst.page_stride_bytes = src.page_stride_bytes;
    dst.index_limit = src.num_pages * problem.sources[s].page_size;
    dst.indices = src.indices;
    dst.index_row_stride = src.index_row_stride;
    dst.lengths = src.lengths;
  }
  params.sink = problem.has_sink ? args.sink : nullptr;
  params.out = args.out;
  params.out_row_stride = args.out_row_stride;
  params.out_head_stride = args.out_head_stride;
  params.lse = problem.want_lse ? args.lse : nullptr;
  if (plan.split) {
    params.partial_out = static_cast<float*>(workspace);
    params.partial_ml =
        reinterpret_cast<float*>(static_cast<char*>(workspace) + plan.partial_ml_offset);
  }

  const KernelPair& kernels = prepared.kernels[call.kernel];
  const LoadedKernel& decode = kernels.decode;
  const LoadedKernel& combine = kernels.combine;
  void* kernel_args[] = {&params};
  CUlaunchConfig config{};
  config.gridDimX = static_cast<unsigned>(plan.decode_blocks / plan.decode_grid_y);
  config.gridDimY = static_cast<unsigned>(plan.decode_grid_y);
  config.gridDimZ = 1;
  config.blockDimX = static_cast<unsigned>(decode.threads);
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = static_cast<unsigned>(decode.smem_bytes);
  config.hStream = stream;
  SMLA_TRY(driver_->check(driver_->cuLaunchKernelEx(&config, decode.function, kernel_args, nullptr),
                          "cuLaunchKernelEx(decode)"));
  if (!plan.split) return ok_status();
  // NOTE: programmatic dependent launch: the combine grid is launched while the decode grid
  // still runs (hiding its launch latency, ~2-3 us of a 1-row call) and waits inside the
  // kernel (griddepcontrol.wait) until the decode grid has finished and its writes are visible.
  CUlaunchAttribute overlap{};
  overlap.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  overlap.value.programmaticStreamSerializationAllowed = 1;
  config.attrs = &overlap;
  config.numAttrs = 1;
  config.gridDimX = static_cast<unsigned>(plan.combine_blocks);
  config.gridDimY = 1;
  config.blockDimX = static_cast<unsigned>(combine.threads);
  config.sharedMemBytes = 0;
  CUfunction combine_function =
      plan.prefix_segments > 1 ? combine.prefix_function : combine.function;
  return driver_->check(driver_->cuLaunchKernelEx(&config, combine_function, kernel_args, nullptr),
                        "cuLaunchKernelEx(combine)");
}

}  // namespace smla
