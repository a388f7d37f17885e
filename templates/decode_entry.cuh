// The decode kernels' entry point. Each decode template defines smla::decode::run_cta, the work
// of one CTA, and includes this last.
#pragma once

extern "C" __global__ void __maxnreg__(smla::decode::kMaxRegisters)
    smla_decode(const __grid_constant__ smla::DecodeParams p) {
  using namespace smla;
  using namespace smla::decode;
  extern __shared__ __align__(16) unsigned char smem[];
  // The combine kernel may start launching now; it waits for this grid to finish.
  launch_dependents();
  run_cta(p, smem, work_item(p));
}
