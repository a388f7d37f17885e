// Part of the entries-on-M decode kernel (decode_kernel.cuh): the column reductions and the
// shared-memory slots through which the owners of a head's scores meet its maximum and sum.
#pragma once

#include "decode_kernel_lanes.cuh"

namespace smla {
namespace decode {

// ---- softmax --------------------------------------------------------------------------------

// Reduces v over the 8 lanes of a fragment column (the g bits of the lane).
SMLA_DEVICE float column_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 4));
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 8));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 16));
}
SMLA_DEVICE float column_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 4);
  v += __shfl_xor_sync(0xffffffffu, v, 8);
  return v + __shfl_xor_sync(0xffffffffu, v, 16);
}

// Writes the column maximum of each owned head into its slot (the order of a maximum does not
// matter); `values` are per owned value.
SMLA_DEVICE void write_max_slots(const Lanes& t, float* slots, const float (&values)[kOwned]) {
  constexpr int kColumns = kOwn.both_rows ? kOwned / 2 : kOwned;
#pragma unroll
  for (int k = 0; k < kColumns; ++k) {
    float v = values[k];
    if (kOwn.both_rows) v = fmaxf(v, values[k + kColumns]);
    v = column_max(v);
    const int slot = t.block * kOwn.row_slots + (kOwn.row_slots == 2 ? t.owned_row(k) : 0);
    if (t.g == 0) slots[t.head(t.owned_combo(k)) * kOwn.slots_per_head + slot] = v;
  }
}

// NOTE: a problem of more than 8 heads may run in CTAs of 8, 16 or 32 heads (the narrow splits
// of autotune/heuristics.h), which must give a head the same bits: its softmax reference moves
// only on its own scores, and its sums add in one order whoever owns them. An 8-head problem
// has one width and keeps the cheaper CTA-wide forms.
constexpr bool kHeadsAlone = kNumHeads > 8;
// Sum slots per head: per entry block, or per (entry block, row) when one-row owners skip the
// handoff below.
constexpr int kSumSlots = kOwn.both_rows || kHeadsAlone ? kEntryBlocks : 2 * kEntryBlocks;

// Writes a segment's sum of each owned head into its slot. Owners of both rows add row g + 8 to
// row g before the column sum; with kHeadsAlone an owner of one row (kOwned == 1) does the same
// after the owner of row g + 8 of its column (part + kCombos) hands its sums over through the
// exchange area (every read of it is behind a block barrier by now), so the order is the same
// at every width. Called by every thread (it holds a barrier then).
SMLA_DEVICE void write_sum_slots(unsigned char* smem, const Lanes& t, float* slots,
                                 const float (&sums)[kOwned]) {
  constexpr int kColumns = kOwn.both_rows ? kOwned / 2 : kOwned;
  if constexpr (!kOwn.both_rows && !kHeadsAlone) {
    const float v = column_sum(sums[0]);
    if (t.g == 0) slots[t.head(t.owned_combo(0)) * kSumSlots + 2 * t.block + t.owned_row(0)] = v;
    return;
  }
  float partner[kColumns];
  if constexpr (kOwn.both_rows) {
#pragma unroll
    for (int k = 0; k < kColumns; ++k) partner[k] = sums[k + kColumns];
  } else {
    // kOwned == 1 here (the static_assert on kOwn above).
    float* handoff = (float*)(smem + kGeo.exchange_offset);
    const int pair = (t.part % kCombos) * kEntryBlocks + t.block;  // column part % kCombos
    if (t.owned_row(0) == 1) handoff[pair * 32 + t.lane] = sums[0];
    __syncthreads();
    if (t.owned_row(0) == 1) return;
    partner[0] = handoff[pair * 32 + t.lane];
  }
#pragma unroll
  for (int k = 0; k < kColumns; ++k) {
    const float v = column_sum(sums[k] + partner[k]);
    if (t.g == 0) slots[t.head(t.owned_combo(k)) * kSumSlots + t.block] = v;
  }
}

// Reads the kSlots slots of one head and reduces them in slot order.
template <bool kMax, int kSlots>
SMLA_DEVICE float read_slots(const float* slots, int head) {
  const float* s = slots + head * kSlots;
  float r = kMax ? neg_inf() : 0.0f;
#pragma unroll
  for (int i = 0; i < kSlots; i += 2) {
    const float2 v = *(const float2*)(s + i);
    r = kMax ? fmaxf(fmaxf(r, v.x), v.y) : r + v.x + v.y;
  }
  return r;
}
SMLA_DEVICE float read_max(const float* slots, int head) {
  return read_slots<true, kOwn.slots_per_head>(slots, head);
}
SMLA_DEVICE float read_sum(const float* slots, int head) {
  return read_slots<false, kSumSlots>(slots, head);
}

// a[i] for a run-time i, without indexing a register array (which would go to local memory).
template <int N>
SMLA_DEVICE float pick(const float (&a)[N], int i) {
  float r = a[0];
#pragma unroll
  for (int k = 1; k < N; ++k) r = i == k ? a[k] : r;
  return r;
}

}  // namespace decode
}  // namespace smla
