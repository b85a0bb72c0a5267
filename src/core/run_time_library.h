// Libraries stoker uses without linking them (nvJPEG, cuFFT): opened at run time, so that
// `import stoker` works where they are missing and the operator that needs one says what to
// install. One loop for all of them: the candidates in turn, the first that loads and has every
// function stoker needs wins. A library opened is never closed (its static state may be in use
// by another component that loaded it too).
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace stoker {

// How a library is named in messages, and what to do when it is missing or too old.
struct RunTimeLibrary {
  std::string name;       // "nvJPEG"
  std::string file;       // "libnvjpeg": named when there are no candidates
  std::string not_found;  // after "<name> (<first candidate>) was not found: "
  std::string too_old;    // after "<name> at <path> lacks <functions>: it is older than stoker needs. "
};

// Opens `candidates` in turn (dlopen, RTLD_NOW | RTLD_LOCAL). For each that loads, `resolve`
// fills the caller's function table from the handle and lists the required functions it lacks;
// the first that lacks none is returned, with where the dynamic loader found it in *path.
// Otherwise returns nullptr with the reason in *why (the first library too old, else what
// dlopen said of the first candidate), naming what to install.
void* open_run_time_library(
    const RunTimeLibrary& lib, const std::vector<std::string>& candidates,
    const std::function<void(void* handle, std::vector<std::string>* missing)>& resolve,
    std::string* path, std::string* why);

// "a, b, c"
std::string join_names(const std::vector<std::string>& names);

// A library loaded once per process, on first use: `load(candidates(), &api, &why)`.
template <class Api>
struct LoadedLibrary {
  Api api;
  bool ok = false;
  std::string why;
};

template <class Api>
const LoadedLibrary<Api>& load_once(
    bool (*load)(const std::vector<std::string>&, Api*, std::string*),
    std::vector<std::string> (*candidates)()) {
  static const LoadedLibrary<Api> l = [&] {
    LoadedLibrary<Api> r;
    r.ok = load(candidates(), &r.api, &r.why);
    return r;
  }();
  return l;
}

}  // namespace stoker
