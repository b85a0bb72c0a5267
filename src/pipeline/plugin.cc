#include "pipeline/plugin.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "core/error.h"
#include "pipeline/schema.h"

namespace stoker {
namespace {

// The plugin's undefined symbols (SchemaRegistry, OpSchema, Operator...) resolve to the stoker
// library that runs this code, wherever it is: the Python module, which Python opens with
// RTLD_LOCAL, or libstoker.so. Making it global first lets the dynamic linker find them.
void make_this_library_global() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&load_plugin), &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}

std::string dl_error() {
  const char* e = dlerror();
  return e ? e : "unknown error";
}

}  // namespace

std::vector<std::string> load_plugin(const std::string& path) {
  static std::mutex mu;
  static std::set<std::string> loaded;  // by real path
  std::lock_guard<std::mutex> g(mu);
  const std::string who = "plugin_manager.load_library('" + path + "')";
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw Error(ErrorKind::kNotFound, who + ": no such file. Give the path of the plugin's "
                "shared library (lib<name>.so, built with find_package(stoker) and the "
                "stoker::plugin target).");
  char real[PATH_MAX];
  const std::string key = realpath(path.c_str(), real) ? real : path;
  if (loaded.count(key)) return {};

  make_this_library_global();
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const std::string e = dl_error();
    const bool missing_symbol = e.find("undefined symbol") != std::string::npos;
    throw Error(ErrorKind::kInvalidArgument,
                who + ": the library cannot be loaded: " + e +
                    (missing_symbol ? ". The plugin needs something this stoker does not have: "
                                      "it was built for another version of stoker; rebuild it "
                                      "against this one (find_package(stoker))."
                                    : "."));
  }
  auto abi = reinterpret_cast<const char* (*)()>(dlsym(h, "stoker_plugin_abi"));
  auto reg = reinterpret_cast<void (*)()>(dlsym(h, "stoker_plugin_register"));
  if (!abi || !reg) {
    dlclose(h);
    throw Error(ErrorKind::kInvalidArgument,
                who + ": this is not a stoker plugin (it has no stoker_plugin_abi / "
                "stoker_plugin_register: build it with find_package(stoker) and link the "
                "stoker::plugin target, which includes pipeline/plugin.h).");
  }
  const std::string want = kPluginAbi, have = abi() ? abi() : "";
  if (have != want) {
    dlclose(h);
    throw Error(ErrorKind::kInvalidArgument,
                who + ": the plugin was built for '" + have + "', and this is '" + want +
                    "'. Rebuild the plugin against this stoker's headers (find_package(stoker)).");
  }
  std::set<std::string> before;
  for (const OpSchema* s : SchemaRegistry::get().all()) before.insert(s->name());
  // (The library stays loaded: its operators may be used until the process ends.)
  loaded.insert(key);
  try {
    reg();
  } catch (const Error& e) {
    std::string msg = e.what();
    const std::string twice = "operator registered twice: ";
    auto at = msg.find(twice);
    if (at != std::string::npos) {
      std::string name = msg.substr(at + twice.size());
      name = name.substr(0, name.find(" ["));
      throw Error(ErrorKind::kInvalidArgument,
                  who + ": the plugin defines the operator fn." + name +
                      ", which this stoker (or a plugin loaded before) already has; give the "
                      "plugin's operator another name.");
    }
    throw Error(e.kind(), who + ": registering its operators failed: " + msg);
  }
  std::vector<std::string> added;
  for (const OpSchema* s : SchemaRegistry::get().all())
    if (!before.count(s->name())) added.push_back(s->name());
  return added;
}

}  // namespace stoker
