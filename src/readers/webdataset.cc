#include "readers/webdataset.h"

#include <algorithm>
#include <sstream>

#include "core/error.h"
#include "readers/random_access_file.h"

namespace stoker::readers::webdataset {

std::pair<std::string, std::string> split_name(const std::string& path) {
  size_t slash = path.rfind('/');
  size_t dot = path.find('.', slash == std::string::npos ? 0 : slash + 1);
  if (dot == std::string::npos) return {path, ""};
  return {path.substr(0, dot), path.substr(dot + 1)};
}

std::vector<Sample> samples_from_entries(const std::vector<tar::Entry>& entries) {
  std::vector<Sample> out;
  std::string last_key;
  bool have_last = false;
  for (const tar::Entry& e : entries) {
    if (e.type != '0') continue;
    auto [key, ext] = split_name(e.name);
    if (key.empty() || key.back() == '/') continue;
    if (!have_last || key != last_key) {
      out.emplace_back();
      last_key = key;
      have_last = true;
    }
    out.back().components.push_back({ext, e.data_offset, e.size, e.name});
  }
  return out;
}

std::vector<Sample> read_index(const std::string& index_path, const std::string& tar_path,
                               int64_t tar_size) {
  const std::optional<std::string> text = read_text_file(index_path);
  if (!text)
    fail(ErrorKind::kNotFound, "index file '" + index_path + "' does not exist (leave index_paths "
                               "out to list the tar files instead)");
  std::istringstream in(*text);
  auto bad = [&](int64_t line, const std::string& why) {
    fail(ErrorKind::kInvalidArgument,
         "index file '" + index_path + "' line " + std::to_string(line) + ": " + why);
  };
  std::string header;
  std::getline(in, header);
  std::istringstream hs(header);
  std::string version;
  long long count = -1;
  if (!(hs >> version)) bad(1, "no version signature; expected 'v1.2 <number of samples>'");
  if (version != "v1.1" && version != "v1.2")
    bad(1, "unsupported index version '" + version + "' (supported: v1.1, v1.2)");
  if (!(hs >> count) || count <= 0) bad(1, "no positive sample count after the version");
  const bool with_names = version == "v1.2";
  std::vector<Sample> out;
  out.reserve(static_cast<size_t>(std::min<long long>(count, 1 << 16)));  // count: from the file
  std::string line;
  for (long long s = 0; s < count; ++s) {
    const int64_t n = s + 2;
    if (!std::getline(in, line))
      bad(n, "the index ends after " + std::to_string(s) + " of the " + std::to_string(count) +
                 " samples its first line announces");
    std::istringstream ls(line);
    Sample sample;
    sample.index_line = n;
    Component c;
    while (ls >> c.ext) {
      if (!(ls >> c.offset >> c.size) || (with_names && !(ls >> c.filename)))
        bad(n, std::string("a component lacks its offset, size") + (with_names ? " or file name" : "") +
                   "; each is '<ext> <offset> <size>" + (with_names ? " <file name>'" : "'"));
      if (c.offset < 0 || c.size < 0 || c.offset % tar::kBlockSize)
        bad(n, "offset " + std::to_string(c.offset) + " is not a multiple of the tar block size (512)");
      if (c.size > tar_size - c.offset)
        bad(n, "the component '" + c.ext + "' ends at byte " +
                   std::to_string(static_cast<unsigned long long>(c.offset) +
                                  static_cast<unsigned long long>(c.size)) +
                   ", past the end of '" + tar_path + "' (" + std::to_string(tar_size) +
                   " bytes): the index does not belong to this archive or the archive is truncated");
      sample.components.push_back(c);
      c = Component{};
    }
    if (sample.components.empty()) bad(n, "the sample has no components");
    out.push_back(std::move(sample));
  }
  return out;
}

}  // namespace stoker::readers::webdataset
