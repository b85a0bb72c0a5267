#include "readers/nemo_asr.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace stoker::readers::nemo {

namespace {

using json = nlohmann::json;

[[noreturn]] void bad_line(const std::string& file, int64_t line, const std::string& what) {
  fail(ErrorKind::kInvalidArgument, "manifest '" + file + "', line " + std::to_string(line) + ": " +
                                        what + "; each line must be one JSON object with at "
                                        "least \"audio_filepath\"");
}

double number_field(const json& o, const char* key, const std::string& file, int64_t line, double dflt) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return dflt;
  if (!it->is_number())
    bad_line(file, line, std::string("\"") + key + "\" is " + it->dump() + ", not a number of seconds");
  return it->get<double>();
}

}  // namespace

std::vector<Entry> parse_manifests(const Options& o) {
  std::vector<Entry> entries;
  for (const std::string& file : o.manifest_filepaths) {
    std::ifstream in(file, std::ios::binary);
    if (!in)
      fail(ErrorKind::kNotFound, "cannot open the NeMo manifest '" + file +
                                     "': no such file, or not readable; check manifest_filepaths");
    std::string text;
    int64_t line_no = 0, index = 0;
    while (std::getline(in, text)) {
      ++line_no;
      if (!text.empty() && text.back() == '\r') text.pop_back();
      if (text.find_first_not_of(" \t") == std::string::npos) continue;
      json obj = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (obj.is_discarded()) bad_line(file, line_no, "not valid JSON");
      if (!obj.is_object()) bad_line(file, line_no, "a JSON " + std::string(obj.type_name()) + ", not an object");
      Entry e;
      auto path = obj.find("audio_filepath");
      if (path == obj.end() || !path->is_string() || path->get<std::string>().empty())
        bad_line(file, line_no, path == obj.end() ? "no \"audio_filepath\""
                                                  : "\"audio_filepath\" is " + path->dump() +
                                                        ", not a file path");
      e.audio_filepath = path->get<std::string>();
      e.duration = number_field(obj, "duration", file, line_no, -1);
      e.offset = number_field(obj, "offset", file, line_no, 0);
      if (o.read_text) {
        auto t = obj.find("text");
        if (t != obj.end() && !t->is_null()) {
          if (!t->is_string()) bad_line(file, line_no, "\"text\" is " + t->dump() + ", not a string");
          e.text = t->get<std::string>();
        }
      }
      if ((o.max_duration > 0 && e.duration > o.max_duration) ||
          (o.min_duration > 0 && e.duration < o.min_duration))
        continue;
      e.index = index++;
      entries.push_back(std::move(e));
    }
  }
  return entries;
}

Segment segment_of(const Entry& e, int64_t frames, int rate) {
  Segment s;
  s.offset = e.offset > 0 ? static_cast<int64_t>(e.offset * rate) : 0;
  s.length = e.duration >= 0 ? static_cast<int64_t>(e.duration * rate) : frames;
  if (s.offset > frames)
    fail(ErrorKind::kInvalidArgument,
         "the manifest's offset of " + std::to_string(e.offset) + " s is past the end of the " +
             std::to_string(static_cast<double>(frames) / rate) + " s file; fix the manifest entry");
  if (s.offset + s.length > frames) s.length = frames - s.offset;
  return s;
}

}  // namespace stoker::readers::nemo
