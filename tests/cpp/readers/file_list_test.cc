#include "readers/file_list.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "readers/remote.h"

namespace stoker::readers {
namespace {
namespace fs = std::filesystem;

#ifdef STOKER_TESTDATA
const std::string kJpegRoot = std::string(STOKER_TESTDATA) + "/images/jpeg";
#else
const std::string kJpegRoot = "/work/shared/testdata/images/jpeg";
#endif

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "stoker_readers_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& rel, const std::string& content = "x") const {
    fs::path p = fs::path(path_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  std::string dir(const std::string& rel) const {
    fs::create_directories(fs::path(path_) / rel);
    return (fs::path(path_) / rel).string();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The error a call raises: its kind and message.
template <typename F>
std::pair<ErrorKind, std::string> error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  return {ErrorKind::kInternal, "(no error)"};
}

std::vector<std::string> rel_paths(const std::vector<FileEntry>& v, const std::string& root) {
  std::vector<std::string> out;
  for (auto& e : v) out.push_back(fs::path(e.path).lexically_relative(root).generic_string());
  return out;
}

TEST(FileList, DefaultFiltersAreDalis) {
  const std::vector<std::string> expected = {"*.jpg", "*.jpeg", "*.png", "*.bmp", "*.tif",
                                             "*.tiff", "*.pnm", "*.ppm", "*.pgm", "*.pbm",
                                             "*.jp2", "*.webp", "*.flac", "*.ogg", "*.wav"};
  EXPECT_EQ(default_file_filters(), expected);
}

TEST(FileList, ClassFoldersSortedFilteredCaseInsensitive) {
  TempDir t;
  t.file("dog/b.jpg");
  t.file("dog/a.PNG");       // default filters are case-insensitive
  t.file("dog/notes.txt");   // filtered out
  t.file("cat/z.jpeg");
  t.file("cat/deep/y.jpg");  // DALI does not descend below the class folder
  t.file("10/x.webp");
  t.file("2/w.bmp");
  t.file("stray.jpg");       // not in a class folder
  t.dir("empty");            // a class with no files still takes a label

  FileListOptions o;
  o.file_root = t.path();
  auto v = build_file_list(o);
  EXPECT_EQ(rel_paths(v, t.path()),
            (std::vector<std::string>{"10/x.webp", "2/w.bmp", "cat/z.jpeg", "dog/a.PNG",
                                      "dog/b.jpg"}));
  std::vector<int> labels;
  for (auto& e : v) labels.push_back(e.label);
  // classes sorted by name: 10, 2, cat, dog, empty
  EXPECT_EQ(labels, (std::vector<int>{0, 1, 2, 3, 3}));

  o.case_sensitive_filter = true;
  v = build_file_list(o);
  EXPECT_EQ(rel_paths(v, t.path()),
            (std::vector<std::string>{"10/x.webp", "2/w.bmp", "cat/z.jpeg", "dog/b.jpg"}));

  o.case_sensitive_filter = false;
  o.file_filters = std::vector<std::string>{"*.txt", "*.JPG"};
  v = build_file_list(o);
  EXPECT_EQ(rel_paths(v, t.path()), (std::vector<std::string>{"dog/b.jpg", "dog/notes.txt"}));

  o.file_filters.reset();
  o.recursive = true;
  v = build_file_list(o);
  EXPECT_EQ(rel_paths(v, t.path())[2], "cat/deep/y.jpg");
  EXPECT_EQ(v.size(), 6u);

  o.recursive = false;
  o.dir_filters = {"d*", "C*"};
  v = build_file_list(o);
  EXPECT_EQ(rel_paths(v, t.path()),
            (std::vector<std::string>{"cat/z.jpeg", "dog/a.PNG", "dog/b.jpg"}));
  EXPECT_EQ(v[0].label, 0);
  EXPECT_EQ(v[2].label, 1);
}

TEST(FileList, SharedJpegTestData) {
  if (!fs::exists(kJpegRoot)) GTEST_SKIP() << kJpegRoot << " is not there";
  FileListOptions o;
  o.file_root = kJpegRoot;
  auto v = build_file_list(o);
  ASSERT_EQ(v.size(), 47u);
  std::set<std::string> classes;
  for (size_t i = 0; i < v.size(); ++i) {
    auto rel = fs::path(v[i].path).lexically_relative(kJpegRoot);
    classes.insert(rel.begin()->string());
    if (i) {
      EXPECT_LE(v[i - 1].label, v[i].label);
      if (v[i - 1].label == v[i].label) {
        EXPECT_LT(v[i - 1].path, v[i].path);
      }
    }
  }
  EXPECT_EQ(classes.size(), 19u);
  EXPECT_EQ(v.front().path, kJpegRoot + "/100/swan-3584559_640.jpg");
  EXPECT_EQ(v.front().label, 0);
  EXPECT_EQ(v.back().path, kJpegRoot + "/84/peacock-90051_640.jpg");  // "84" > "814"
  EXPECT_EQ(v.back().label, 18);

  // The same files through the shipped list (labels there are the folder names).
  FileListOptions l;
  l.file_list = kJpegRoot + "/image_list.txt";
  auto listed = build_file_list(l);
  ASSERT_EQ(listed.size(), 47u);
  EXPECT_EQ(listed[0].path, kJpegRoot + "/425/abandoned-2179173_1280.jpg");
  EXPECT_EQ(listed[0].label, 425);
  auto bytes = read_file(listed[0].path);
  ASSERT_GT(bytes.size(), 2u);
  EXPECT_EQ(bytes[0], 0xFF);
  EXPECT_EQ(bytes[1], 0xD8);
}

TEST(FileList, FileRootErrors) {
  FileListOptions o;
  o.file_root = "/nonexistent/stoker/root";
  auto [kind, msg] = error_of([&] { build_file_list(o); });
  EXPECT_EQ(kind, ErrorKind::kNotFound);
  EXPECT_EQ(msg, "file_root '/nonexistent/stoker/root' does not exist");

  TempDir t;
  t.file("a/readme.txt");
  o.file_root = t.path();
  std::tie(kind, msg) = error_of([&] { build_file_list(o); });
  EXPECT_EQ(kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(msg.find("none in its 1 class sub-folder matches file_filters ['*.jpg', '*.jpeg'"),
            std::string::npos) << msg;
  EXPECT_NE(msg.find("(case-insensitive)"), std::string::npos) << msg;

  TempDir flat;
  flat.file("img.jpg");
  o.file_root = flat.path();
  std::tie(kind, msg) = error_of([&] { build_file_list(o); });
  EXPECT_NE(msg.find("it has no class sub-folders"), std::string::npos) << msg;

  o.file_root = flat.path() + "/img.jpg";
  std::tie(kind, msg) = error_of([&] { build_file_list(o); });
  EXPECT_EQ(kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(msg.find("is not a directory"), std::string::npos) << msg;

  o.file_root = flat.path();
  o.file_filters = std::vector<std::string>{};
  std::tie(kind, msg) = error_of([&] { build_file_list(o); });
  EXPECT_EQ(msg, "file_filters cannot be an empty list");
}

TEST(FileList, FileListParsing) {
  TempDir t;
  std::string list = t.file("lists/train.txt",
                            "a.jpg 0\n"
                            "\n"
                            "  sub/with space.png   12  \r\n"
                            "/abs/c.jpg 3\n"
                            "   \n");
  auto v = parse_file_list(list);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].path, t.path() + "/lists/a.jpg");  // relative to the list's folder
  EXPECT_EQ(v[0].label, 0);
  EXPECT_EQ(v[1].path, t.path() + "/lists/sub/with space.png");
  EXPECT_EQ(v[1].label, 12);
  EXPECT_EQ(v[2].path, "/abs/c.jpg");
  EXPECT_EQ(v[2].label, 3);

  FileListOptions o;
  o.file_list = list;
  o.file_root = "/data";  // file_root replaces the list's folder
  v = build_file_list(o);
  EXPECT_EQ(v[0].path, "/data/a.jpg");

  const std::pair<std::string, std::string> bad[] = {
      {"a.jpg 1\nb.jpg\n", "line 2: the line does not end with an integer label"},
      {"a.jpg 1\n\nb.jpg x\n", "line 3: the line does not end with an integer label"},
      {"7\n", "line 1: there is no path before the label"},
      {"a.jpg -1\n", "line 1: the line does not end with an integer label separated"},
      {"b.jpg5\n", "line 1: the line does not end with an integer label separated"},
      {"a.jpg 99999999999\n", "line 1: the label 99999999999 is too large"},
  };
  for (auto& [content, expect] : bad) {
    std::string path = t.file("bad.txt", content);
    auto [kind, msg] = error_of([&] { parse_file_list(path); });
    EXPECT_EQ(kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(msg.find("file_list '" + path + "' " + expect), std::string::npos) << msg;
  }
  std::string empty = t.file("empty.txt", "\n \n");
  EXPECT_NE(error_of([&] { parse_file_list(empty); }).second.find("lists no files"),
            std::string::npos);
  auto [kind, msg] = error_of([&] { parse_file_list(t.path() + "/missing.txt"); });
  EXPECT_EQ(kind, ErrorKind::kNotFound);
  EXPECT_EQ(msg, "file_list '" + t.path() + "/missing.txt' does not exist");
}

TEST(FileList, FilesAndLabels) {
  FileListOptions o;
  o.files = std::vector<std::string>{"x.jpg", "/abs/y.jpg", "z.jpg"};
  auto v = build_file_list(o);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].path, "x.jpg");
  EXPECT_EQ(v[2].label, 2);  // DALI's default labels: 0..N-1
  o.file_root = "/root";
  o.labels = std::vector<int>{5, 6, 7};
  v = build_file_list(o);
  EXPECT_EQ(v[0].path, "/root/x.jpg");
  EXPECT_EQ(v[1].path, "/abs/y.jpg");
  EXPECT_EQ(v[1].label, 6);

  o.labels = std::vector<int>{1};
  EXPECT_EQ(error_of([&] { build_file_list(o); }).second,
            "labels has 1 entries for 3 files; give one label per file");
  o.labels.reset();
  o.file_list = "/x.txt";
  EXPECT_EQ(error_of([&] { build_file_list(o); }).second,
            "file paths can be given through files or file_list, but not both");
  FileListOptions none;
  EXPECT_EQ(error_of([&] { build_file_list(none); }).second,
            "file_root is required when neither files nor file_list is given");
  FileListOptions lab;
  lab.file_root = "/r";
  lab.labels = std::vector<int>{1};
  EXPECT_EQ(error_of([&] { build_file_list(lab); }).second,
            "labels is valid only when file paths are given through files");
  FileListOptions empty;
  empty.files = std::vector<std::string>{};
  EXPECT_EQ(error_of([&] { build_file_list(empty); }).second,
            "files is an empty list; give at least one path");
}

TEST(FileList, ReadFile) {
  TempDir t;
  std::string content(3 << 20, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7 + 3);
  std::string p = t.file("big.bin", content);
  auto bytes = read_file(p);
  ASSERT_EQ(bytes.size(), content.size());
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), content.begin(),
                         [](uint8_t a, char b) { return a == static_cast<uint8_t>(b); }));
  EXPECT_EQ(file_size(p), int64_t(content.size()));
  std::vector<uint8_t> dst(content.size() + 10);
  EXPECT_EQ(read_file_into(p, dst.data(), dst.size()), content.size());
  EXPECT_EQ(dst[12345], static_cast<uint8_t>(content[12345]));
  auto [kind, msg] = error_of([&] { read_file_into(p, dst.data(), 100); });
  EXPECT_EQ(kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(msg.find("more than the 100 bytes"), std::string::npos);

  EXPECT_TRUE(read_file(t.file("empty.bin", "")).empty());
  std::tie(kind, msg) = error_of([&] { read_file(t.path() + "/nope.jpg"); });
  EXPECT_EQ(kind, ErrorKind::kNotFound);
  EXPECT_EQ(msg, "file '" + t.path() + "/nope.jpg' does not exist");
  std::tie(kind, msg) = error_of([&] { read_file(t.path()); });
  EXPECT_EQ(kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(msg.find("is not a regular file"), std::string::npos);
}

// A remote file system in memory: folders and files by URL.
class FakeRemote : public RemoteFiles {
 public:
  std::map<std::string, std::string> files;  // url -> bytes
  int reads = 0;
  std::vector<RemoteEntry> list(const std::string& url) override {
    const std::string dir = url.back() == '/' ? url : url + "/";
    std::set<std::string> dirs;
    std::vector<RemoteEntry> out;
    bool any = false;
    for (const auto& [u, data] : files) {
      if (u.rfind(dir, 0) != 0) continue;
      any = true;
      const std::string rest = u.substr(dir.size());
      const size_t slash = rest.find('/');
      if (slash == std::string::npos) out.push_back({u, false});
      else dirs.insert(dir + rest.substr(0, slash));
    }
    if (!any) {
      if (files.count(url)) fail(ErrorKind::kInvalidArgument, url + " is not a folder");
      fail(ErrorKind::kNotFound, url + " does not exist");
    }
    for (const auto& d : dirs) out.push_back({d, true});
    return out;
  }
  std::vector<RemoteRead> read(const std::vector<std::string>& urls) override {
    ++reads;
    std::vector<RemoteRead> out;
    for (const auto& u : urls) {
      RemoteRead r;
      auto it = files.find(u);
      if (it == files.end()) {
        r.error = ErrorKind::kNotFound;
        r.message = "file '" + u + "' does not exist";
      } else {
        r.ok = true;
        r.data = it->second;
      }
      out.push_back(r);
    }
    return out;
  }
};

TEST(Remote, UrlsAreToldFromPaths) {
  EXPECT_TRUE(is_url("s3://bucket/key"));
  EXPECT_TRUE(is_url("https://host/x.jpg"));
  EXPECT_TRUE(is_url("git+ssh://host/x"));
  EXPECT_FALSE(is_url("/data/x.jpg"));
  EXPECT_FALSE(is_url("C://x"));       // (a one-letter scheme: a Windows drive)
  EXPECT_FALSE(is_url("a b://x"));
  EXPECT_FALSE(is_url("1s3://x"));
  EXPECT_EQ(url_name("s3://b/train/cat/"), "cat");
  EXPECT_EQ(url_name("s3://b/train/cat/x.jpg"), "x.jpg");
  EXPECT_EQ(join_path("s3://b/root", "a/x.jpg"), "s3://b/root/a/x.jpg");
  EXPECT_EQ(join_path("s3://b/root", "gs://other/x.jpg"), "gs://other/x.jpg");
}

TEST(Remote, ClassFoldersFileListsAndErrors) {
  set_remote_files(nullptr);
  try {
    build_file_list({.file_root = std::string("s3://b/ds")});
    FAIL() << "no remote file system installed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("'s3://b/ds' is a URL"), std::string::npos) << e.what();
  }
  auto fake = std::make_shared<FakeRemote>();
  fake->files = {{"s3://b/ds/dog/2.jpg", "22"}, {"s3://b/ds/dog/1.JPG", "1"},
                 {"s3://b/ds/cat/9.png", "999"}, {"s3://b/ds/cat/notes.txt", "x"},
                 {"s3://b/ds/cat/deep/3.jpg", "333"}, {"s3://b/list.txt", "ds/dog/2.jpg 5\n"}};
  set_remote_files(fake);
  auto files = build_file_list({.file_root = std::string("s3://b/ds")});
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].path, "s3://b/ds/cat/9.png");
  EXPECT_EQ(files[0].label, 0);
  EXPECT_EQ(files[1].path, "s3://b/ds/dog/1.JPG");  // (filters are case-insensitive)
  EXPECT_EQ(files[2].label, 1);
  FileListOptions deep{.file_root = std::string("s3://b/ds")};
  deep.recursive = true;
  EXPECT_EQ(build_file_list(deep).size(), 4u);
  auto listed = build_file_list({.file_list = std::string("s3://b/list.txt")});
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].path, "s3://b/ds/dog/2.jpg");
  EXPECT_EQ(listed[0].label, 5);
  EXPECT_EQ(read_file("s3://b/ds/cat/9.png"), std::vector<uint8_t>({'9', '9', '9'}));
  EXPECT_EQ(file_size("s3://b/ds/dog/2.jpg"), 2);
  try {
    build_file_list({.file_root = std::string("s3://b/nope")});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_STREQ(e.what(), "file_root 's3://b/nope' does not exist");
  }
  try {
    read_file("s3://b/ds/none.jpg");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
  }
  set_remote_files(nullptr);
}

}  // namespace
}  // namespace stoker::readers
