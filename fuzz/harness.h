// What every stoker fuzz harness shares: the oracle (which outcomes are bugs) and the replay of
// regression inputs that earlier fuzzing found, made in code rather than stored as files.
//
// The oracle: for hostile input, stoker's parsers may return or throw stoker::Error of the kinds
// the interface documents for bad data. Anything else is a finding and aborts, so that libFuzzer
// saves the input: a sanitizer report, an exception of another kind or type, or a result that
// breaks the documented contract (checked by each harness).
#pragma once
#include <sanitizer/allocator_interface.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/error.h"

namespace stoker::fuzz {

inline const char* kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::kInvalidArgument: return "kInvalidArgument";
    case ErrorKind::kTypeMismatch: return "kTypeMismatch";
    case ErrorKind::kNotFound: return "kNotFound";
    case ErrorKind::kDecode: return "kDecode";
    case ErrorKind::kIO: return "kIO";
    case ErrorKind::kOutOfMemory: return "kOutOfMemory";
    case ErrorKind::kUnsupported: return "kUnsupported";
    case ErrorKind::kInternal: return "kInternal";
  }
  return "?";
}

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "\n==stoker-fuzz== FINDING: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// Runs `f`; an Error of one of `allowed` kinds is an accepted outcome (returns false), any other
// exception is a finding. Returns true when `f` returned normally.
template <typename F>
bool expect_ok_or(const char* step, std::initializer_list<ErrorKind> allowed, F&& f) {
  try {
    f();
    return true;
  } catch (const Error& e) {
    for (ErrorKind k : allowed)
      if (e.kind() == k) return false;
    finding(std::string(step) + " threw Error(" + kind_name(e.kind()) + "): " + e.what());
  } catch (const std::exception& e) {
    finding(std::string(step) + " threw a non-stoker exception: " + e.what());
  } catch (...) {
    finding(std::string(step) + " threw something that is not a std::exception");
  }
}

// A regression input: found by fuzzing, fixed, and replayed at the start of every run.
struct Regression {
  const char* name;
  std::vector<uint8_t> bytes;
};

// libFuzzer's -rss_limit_mb, -malloc_limit_mb and -timeout are not armed yet while
// LLVMFuzzerInitialize runs, so the replay arms its own: the largest single allocation, seen
// through the sanitizer's malloc hook, and an alarm (SIGALRM's default action ends the process).
constexpr size_t kReplayMallocLimit = size_t{256} << 20;
constexpr unsigned kReplaySeconds = 30;
inline std::atomic<bool> g_track_mallocs{false};
inline std::atomic<size_t> g_largest_malloc{0};

inline void on_malloc(const volatile void*, size_t size) {
  if (!g_track_mallocs.load(std::memory_order_relaxed)) return;
  size_t cur = g_largest_malloc.load(std::memory_order_relaxed);
  while (size > cur && !g_largest_malloc.compare_exchange_weak(cur, size)) {
  }
}
inline void on_free(const volatile void*) {}

// Replays `cases` through the harness's entry point (called from LLVMFuzzerInitialize, so
// both fuzzing and reproducing a saved input replay them first).
inline void replay(const std::vector<Regression>& cases,
                   int (*entry)(const uint8_t*, size_t)) {
  static const bool hooked = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) != 0;
  for (const Regression& r : cases) {
    std::fprintf(stderr, "==stoker-fuzz== replaying regression '%s' (%zu bytes)\n", r.name,
                 r.bytes.size());
    g_largest_malloc = 0;
    g_track_mallocs = true;
    alarm(kReplaySeconds);
    entry(r.bytes.data(), r.bytes.size());
    alarm(0);
    g_track_mallocs = false;
    if (hooked && g_largest_malloc > kReplayMallocLimit)
      finding("regression '" + std::string(r.name) + "' made an allocation of " +
              std::to_string(g_largest_malloc) + " bytes");
  }
}

inline std::vector<uint8_t> bytes_of(const std::string& s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

}  // namespace stoker::fuzz
