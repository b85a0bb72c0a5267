#include "core/run_time_library.h"

#include <dlfcn.h>
#include <link.h>

namespace stoker {

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& x : names) s += (s.empty() ? "" : ", ") + x;
  return s;
}

void* open_run_time_library(
    const RunTimeLibrary& lib, const std::vector<std::string>& candidates,
    const std::function<void(void* handle, std::vector<std::string>* missing)>& resolve,
    std::string* path, std::string* why) {
  std::string first_error, too_old;
  for (const std::string& name : candidates) {
    dlerror();
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* err = dlerror();
      if (first_error.empty()) first_error = err ? err : name + ": cannot be loaded";
      continue;
    }
    link_map* map = nullptr;
    const std::string found =
        dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name
            ? map->l_name
            : name;
    std::vector<std::string> missing;
    resolve(handle, &missing);
    if (!missing.empty()) {
      if (too_old.empty())
        too_old = lib.name + " at " + found + " lacks " + join_names(missing) +
                  ": it is older than stoker needs. " + lib.too_old;
      continue;  // kept loaded: a library is never unloaded
    }
    if (path) *path = found;
    if (why) why->clear();
    return handle;
  }
  if (why)
    *why = !too_old.empty()
               ? too_old
               : lib.name + " (" + (candidates.empty() ? lib.file : candidates[0]) +
                     ") was not found: " + lib.not_found + " (Tried " + join_names(candidates) +
                     "; " + first_error + ")";
  return nullptr;
}

}  // namespace stoker
