#include "readers/frame_sequences.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

#include "core/error.h"
#include "readers/file_list.h"

namespace stoker::readers {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void list_fail(const std::string& dir, const std::error_code& ec) {
  fail(ErrorKind::kIO, "cannot list '" + dir + "': " + ec.message());
}

// Names in `dir` (not starting with '.', as a shell glob '*' takes them) of the entries that
// `keep` accepts.
template <typename Keep>
std::vector<std::string> names_in(const std::string& dir, Keep keep) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) list_fail(dir, ec);
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) list_fail(dir, ec);
    std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (keep(*it, name)) out.push_back(std::move(name));
  }
  if (ec) list_fail(dir, ec);
  // Byte order, as DALI sorts the paths (folders are compared as whole paths by the caller).
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool is_sequence_frame_name(const std::string& name) {
  static const char* const kExtensions[] = {".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff",
                                            ".pnm", ".ppm",  ".pgm", ".pbm", ".jp2", ".webp"};
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* e : kExtensions) {
    const std::string ext(e);
    if (lower.size() >= ext.size() && lower.compare(lower.size() - ext.size(), ext.size(), ext) == 0)
      return true;
  }
  return false;
}

std::vector<FrameStream> list_frame_streams(const std::string& file_root) {
  std::error_code ec;
  if (!fs::exists(file_root, ec))
    fail(ErrorKind::kNotFound, "file_root '" + file_root + "' does not exist");
  if (!fs::is_directory(file_root, ec))
    fail(ErrorKind::kNotFound, "file_root '" + file_root + "' is not a folder");
  std::vector<std::string> folders = names_in(file_root, [](const fs::directory_entry& e, const std::string&) {
    std::error_code ec2;
    return e.is_directory(ec2);
  });
  std::vector<FrameStream> streams;
  for (const std::string& name : folders) {
    FrameStream s;
    s.folder = join_path(file_root, name);
    for (const std::string& f : names_in(s.folder, [](const fs::directory_entry& e, const std::string& n) {
           std::error_code ec2;
           return is_sequence_frame_name(n) && e.is_regular_file(ec2);
         }))
      s.frames.push_back(join_path(s.folder, f));
    if (!s.frames.empty()) streams.push_back(std::move(s));
  }
  // DALI sorts whole paths: "a.b/x" comes before "a/x" although "a" < "a.b" as names.
  std::stable_sort(streams.begin(), streams.end(), [](const FrameStream& a, const FrameStream& b) {
    return a.folder + "/" < b.folder + "/";
  });
  return streams;
}

std::vector<FrameSequence> cut_sequences(const std::vector<FrameStream>& streams, int64_t length,
                                         int64_t step, int64_t stride) {
  std::vector<FrameSequence> out;
  for (size_t s = 0; s < streams.size(); ++s) {
    const int64_t n = static_cast<int64_t>(streams[s].frames.size());
    // The last frame, start + (length-1)*stride, must be < n; divided, so that no product of
    // huge arguments overflows.
    if (n == 0 || length - 1 > (n - 1) / stride) continue;
    const int64_t last_start = n - 1 - (length - 1) * stride;
    for (int64_t start = 0;; start += step) {
      out.push_back({static_cast<int32_t>(s), start});
      if (step > last_start - start) break;
    }
  }
  return out;
}

}  // namespace stoker::readers
