#include "readers/frame_sequences.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"

namespace stoker::readers {
namespace {
namespace fs = std::filesystem;

class FrameTempDir {
 public:
  FrameTempDir() {
    std::string tmpl = (fs::temp_directory_path() / "stoker_frames_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~FrameTempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  void file(const std::string& rel) const {
    fs::path p = fs::path(path_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << "x";
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

FrameStream stream_of(int64_t n) {
  FrameStream s;
  for (int64_t i = 0; i < n; ++i) s.frames.push_back(std::to_string(i));
  return s;
}

std::vector<std::pair<int, int64_t>> starts(const std::vector<FrameSequence>& v) {
  std::vector<std::pair<int, int64_t>> out;
  for (const auto& s : v) out.emplace_back(s.stream, s.start);
  return out;
}

TEST(FrameSequencesTest, WindowsAsDaliCutsThem) {
  const std::vector<FrameStream> streams = {stream_of(5), stream_of(2), stream_of(7)};
  using P = std::vector<std::pair<int, int64_t>>;
  EXPECT_EQ(starts(cut_sequences(streams, 2, 1, 1)),
            (P{{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 0}, {2, 0}, {2, 1}, {2, 2}, {2, 3}, {2, 4}, {2, 5}}));
  EXPECT_EQ(starts(cut_sequences(streams, 3, 2, 2)), (P{{0, 0}, {2, 0}, {2, 2}}));
  EXPECT_EQ(starts(cut_sequences(streams, 1, 3, 1)), (P{{0, 0}, {0, 3}, {1, 0}, {2, 0}, {2, 3}, {2, 6}}));
  EXPECT_TRUE(cut_sequences(streams, 8, 1, 1).empty());
  EXPECT_EQ(starts(cut_sequences(streams, 7, 1, 1)), (P{{2, 0}}));
  // Arguments whose products overflow 64 bits give no sequence rather than a wrong one.
  EXPECT_TRUE(cut_sequences(streams, INT64_MAX, INT64_MAX, INT64_MAX).empty());
  EXPECT_EQ(starts(cut_sequences(streams, 1, INT64_MAX, INT64_MAX)), (P{{0, 0}, {1, 0}, {2, 0}}));
}

TEST(FrameSequencesTest, ListsFoldersAsDaliGlobsThem) {
  FrameTempDir d;
  for (const char* f : {"x/b.JPG", "x/a.png", "x/notes.txt", "x/.hidden.jpg", "x.y/0.webp",
                        "x-1/0.jpeg", ".h/0.jpg", "top.jpg", "empty/readme.md"})
    d.file(f);
  fs::create_directories(fs::path(d.path()) / "x" / "sub.jpg");  // a folder, not a frame
  auto streams = list_frame_streams(d.path());
  ASSERT_EQ(streams.size(), 3u);
  EXPECT_EQ(streams[0].folder, d.path() + "/x-1");  // whole paths: '-' < '.' < '/'
  EXPECT_EQ(streams[1].folder, d.path() + "/x.y");
  EXPECT_EQ(streams[2].folder, d.path() + "/x");
  EXPECT_EQ(streams[2].frames, (std::vector<std::string>{d.path() + "/x/a.png", d.path() + "/x/b.JPG"}));
  EXPECT_TRUE(is_sequence_frame_name("A.TiFF"));
  EXPECT_FALSE(is_sequence_frame_name("a.gif"));
  EXPECT_FALSE(is_sequence_frame_name("jpg"));
}

TEST(FrameSequencesTest, MissingRootIsNotFound) {
  try {
    list_frame_streams("/nonexistent/frames");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_STREQ(e.what(), "file_root '/nonexistent/frames' does not exist");
  }
}

}  // namespace
}  // namespace stoker::readers
