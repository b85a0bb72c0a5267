// Errors: one exception type whose kind says how it reaches the user.
#pragma once
#include <stdexcept>
#include <string>
#include <utility>

namespace stoker {

// How an error maps to Python: kInvalidArgument -> ValueError, kTypeMismatch -> TypeError,
// kNotFound -> FileNotFoundError, kDecode -> stoker.DecodeError, kIO -> OSError,
// kOutOfMemory -> MemoryError, kUnsupported -> NotImplementedError, kInternal -> stoker.InternalError.
enum class ErrorKind { kInvalidArgument, kTypeMismatch, kNotFound, kDecode, kIO, kOutOfMemory,
                       kUnsupported, kInternal };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }
  // The same error with `context` put in front, e.g. the operator and sample it came from.
  Error with_context(const std::string& context) const {
    return Error(kind_, context + ": " + what());
  }

 private:
  ErrorKind kind_;
};

[[noreturn]] inline void fail(ErrorKind kind, const std::string& message) { throw Error(kind, message); }

// For conditions that only a bug in stoker can cause.
#define STOKER_ASSERT(cond, msg)                                                                \
  do {                                                                                          \
    if (!(cond))                                                                                \
      ::stoker::fail(::stoker::ErrorKind::kInternal, std::string("internal error at ") + __FILE__ \
                     + ":" + std::to_string(__LINE__) + ": " + (msg) + " [" #cond "]");        \
  } while (0)

}  // namespace stoker
