// Custom operators from plugin libraries, as DALI's plugin_manager.load_library loads them.
//
// A plugin is a shared library built against stoker's installed headers (find_package(stoker),
// target stoker::plugin, which defines STOKER_PLUGIN). Its operators are written as stoker's own
// are: a schema with STOKER_REGISTER_OP_NAMED and backends (STOKER_REGISTER_BACKEND for a GPU
// twin in a .cu file). Built as a plugin, those macros do not register at load time: they queue
// the registrations, and the loader runs them only after checking that the plugin was built for
// this stoker (kPluginAbi), so that a plugin of another version fails with a message instead of
// writing into structures it does not know.
#pragma once
#include <string>
#include <vector>

namespace stoker {

// Bumped with the version, and whenever the operator interface (schema.h, operator.h, batch.h
// and what they include) changes shape; a plugin must have been compiled against the same.
inline constexpr const char* kPluginAbi = "stoker 0.1.0, plugin interface 1";

// Loads the plugin at `path` and registers its operators; returns their names (none when that
// library was loaded before). Throws Error: kNotFound (no such file), kInvalidArgument (not a
// stoker plugin, built for another stoker, a symbol this stoker lacks, an operator name taken).
std::vector<std::string> load_plugin(const std::string& path);

}  // namespace stoker

#ifdef STOKER_PLUGIN
namespace stoker::plugin_detail {
// The registrations of this plugin's operators, run by stoker_plugin_register().
__attribute__((visibility("hidden"))) inline std::vector<void (*)()>& pending() {
  static std::vector<void (*)()> v;
  return v;
}
}  // namespace stoker::plugin_detail

extern "C" __attribute__((used, visibility("default"))) inline const char* stoker_plugin_abi() {
  return ::stoker::kPluginAbi;
}
extern "C" __attribute__((used, visibility("default"))) inline void stoker_plugin_register() {
  for (auto f : ::stoker::plugin_detail::pending()) f();
  ::stoker::plugin_detail::pending().clear();
}
#endif
