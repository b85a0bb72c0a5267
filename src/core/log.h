// Messages for the user that are not errors: a bad file skipped, the traces asked for with
// STOKER_TRACE_*. They go to one sink, which the Python module sets at import to Python's
// `logging` (logger "stoker"); where none is set (the C++ tests, a C++ program, the
// interpreter's exit) they are printed to stderr.
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <string>

namespace stoker {

// Python's logging levels, so that the sink passes them on as they are.
enum class LogLevel : int { kDebug = 10, kInfo = 20, kWarning = 30, kError = 40 };

// Called from any thread, without locks held; must not throw.
using LogSink = void (*)(LogLevel level, const std::string& message);

inline std::atomic<LogSink>& log_sink() {
  static std::atomic<LogSink> sink{nullptr};
  return sink;
}

inline void set_log_sink(LogSink sink) { log_sink().store(sink); }

// printf-style; one line, without its '\n'.
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
inline void log_message(LogLevel level, const char* format, ...) {
  char small[512];
  std::va_list args;
  va_start(args, format);
  std::va_list again;
  va_copy(again, args);
  int n = std::vsnprintf(small, sizeof small, format, args);
  va_end(args);
  std::string message;
  if (n >= static_cast<int>(sizeof small)) {
    message.resize(static_cast<size_t>(n));
    std::vsnprintf(message.data(), message.size() + 1, format, again);
  } else if (n > 0) {
    message.assign(small, static_cast<size_t>(n));
  }
  va_end(again);
  if (LogSink sink = log_sink().load()) {
    sink(level, message);
  } else {
    std::fprintf(stderr, "%s\n", message.c_str());
  }
}

}  // namespace stoker
