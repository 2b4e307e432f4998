// Work shared out to XLA's intra-op thread pool, for the native kernels.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "xla/ffi/api/ffi.h"

namespace bayesclust {

// body(i) for every i in [0, n_items), items handed out one at a time to the
// pool's threads and to the calling thread, which also works and can finish
// every item alone, so the call never waits on a pool thread that has not
// started.  `body` is copied into the tasks: it must hold what it needs by
// value or shared_ptr, since a task may start after the call has returned (it
// then finds no item left).
template <typename Body>
void ParallelFor(xla::ffi::ThreadPool& pool, int64_t n_items, Body body) {
  struct Counters {
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> done{0};
  };
  auto counters = std::make_shared<Counters>();
  auto work = [counters, body, n_items]() {
    for (int64_t i; (i = counters->next.fetch_add(1)) < n_items;) {
      body(i);
      counters->done.fetch_add(1, std::memory_order_release);
    }
  };
  const int64_t helpers =
      std::min<int64_t>(std::max<int64_t>(pool.num_threads(), 1), n_items) - 1;
  for (int64_t t = 0; t < helpers; ++t) pool.Schedule(decltype(work)(work));
  work();
  while (counters->done.load(std::memory_order_acquire) < n_items) std::this_thread::yield();
}

// body(first, count) for groups of consecutive chains 0..C-1, each at most
// `lanes` chains (one SIMD register of the Gibbs kernels), as many groups as
// threads when the chains allow it (a step costs the same with one lane in use
// as with all), shared out by ParallelFor.
template <typename Body>
void ForChainGroups(xla::ffi::ThreadPool& pool, int64_t C, int64_t lanes, Body body) {
  const int64_t threads = std::max<int64_t>(pool.num_threads(), 1);
  const int64_t n_groups = std::max((C + lanes - 1) / lanes, std::min<int64_t>(C, threads));
  const int64_t per_group = (C + n_groups - 1) / n_groups;
  ParallelFor(pool, n_groups, [body, per_group, C](int64_t g) {
    const int64_t first = g * per_group;
    if (first < C) body(first, std::min(per_group, C - first));
  });
}

}  // namespace bayesclust
