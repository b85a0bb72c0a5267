// libFuzzer harness: readers::parse_file_list, the "<path> <label>" text of readers.file's
// file_list, on arbitrary file contents.
//
// Input: one option byte (bit 0: give file_root; bit 1: with a trailing slash), then the
// contents of the list file. The file is an in-memory file (memfd) named by /proc/self/fd/N, so
// fuzzing writes nothing to disk.
//
// Oracle: besides sanitizer reports, the result is compared with a second, independent reading
// of the same text (split at the last blank of each trimmed line): the same entries in the same
// order, or, when any line is malformed or no line names a file, Error(kInvalidArgument).
#include <sys/mman.h>
#include <unistd.h>

#include <cctype>
#include <climits>
#include <optional>
#include <string>
#include <vector>

#include "harness.h"
#include "readers/file_list.h"

namespace {

using stoker::readers::FileEntry;

int g_fd = -1;
std::string g_path;

bool blank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// The reference reading; nullopt where the list must be refused.
std::optional<std::vector<FileEntry>> reference(const std::string& text, const std::string& base) {
  std::vector<FileEntry> out;
  size_t pos = 0;
  while (pos < text.size()) {  // std::getline's lines: split at '\n', no empty last line
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    size_t b = 0, e = line.size();
    while (b < e && blank(line[b])) ++b;
    while (e > b && blank(line[e - 1])) --e;
    if (b == e) continue;
    const std::string t = line.substr(b, e - b);
    size_t k = t.size();
    while (k > 0 && !blank(t[k - 1])) --k;
    if (k == 0) return std::nullopt;  // one word: no label, or no path
    const std::string label = t.substr(k);
    long long v = 0;
    for (char c : label) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + (c - '0');
      if (v > INT_MAX) return std::nullopt;
    }
    size_t n = k;
    while (n > 0 && blank(t[n - 1])) --n;
    const std::string name = t.substr(0, n);
    // A URL ("s3://...": a letter, then letters, digits, '+', '-' or '.', two or more, then
    // "://") is taken as it is, like an absolute path.
    const size_t sep = name.find("://");
    bool url = sep != std::string::npos && sep >= 2 && std::isalpha(static_cast<unsigned char>(name[0]));
    for (size_t i = 1; url && i < sep; ++i)
      url = std::isalnum(static_cast<unsigned char>(name[i])) || name[i] == '+' || name[i] == '-' ||
            name[i] == '.';
    std::string path = name[0] == '/' || url || base.empty() ? name
                       : base.back() == '/'           ? base + name
                                                      : base + "/" + name;
    out.push_back({path, static_cast<int>(v)});
  }
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker;
  if (size < 1) return 0;
  const uint8_t opt = data[0];
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (ftruncate(g_fd, 0) != 0 || pwrite(g_fd, text.data(), text.size(), 0) !=
                                     static_cast<ssize_t>(text.size()))
    fuzz::finding("cannot write the memfd");
  std::optional<std::string> root;
  if (opt & 1) root = (opt & 2) ? "/data/set/" : "/data/set";
  const std::string base = root ? *root : g_path.substr(0, g_path.rfind('/'));

  std::vector<FileEntry> got;
  const bool ok = fuzz::expect_ok_or("parse_file_list", {ErrorKind::kInvalidArgument},
                                     [&] { got = readers::parse_file_list(g_path, root); });
  const auto want = reference(text, base);
  if (ok != want.has_value())
    fuzz::finding(ok ? "parse_file_list accepted a list the reference refuses"
                     : "parse_file_list refused a list the reference accepts");
  if (!ok) return 0;
  if (got.size() != want->size())
    fuzz::finding("parse_file_list gave " + std::to_string(got.size()) + " entries, the reference " +
                  std::to_string(want->size()));
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i].path != (*want)[i].path || got[i].label != (*want)[i].label)
      fuzz::finding("entry " + std::to_string(i) + " is ('" + got[i].path + "', " +
                    std::to_string(got[i].label) + "), the reference says ('" + (*want)[i].path +
                    "', " + std::to_string((*want)[i].label) + ")");
  return 0;
}

namespace {
std::vector<stoker::fuzz::Regression> regressions() { return {}; }
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_fd = memfd_create("stoker_fuzz_file_list", MFD_CLOEXEC);
  if (g_fd < 0) stoker::fuzz::finding("memfd_create failed");
  g_path = "/proc/self/fd/" + std::to_string(g_fd);
  stoker::fuzz::replay(regressions(), LLVMFuzzerTestOneInput);
  return 0;
}
