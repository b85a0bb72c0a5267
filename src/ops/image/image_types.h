// Enumerations shared by image operators; the numbers are DALI's (types.DALIImageType,
// types.DALIInterpType) so that Python enum values pass straight through.
#pragma once

namespace stoker {

enum class ImageType { kRGB = 0, kBGR = 1, kYCbCr = 2, kGray = 3, kAnyData = 4, kHSV = 5 };
enum class InterpType { kNN = 0, kLinear = 1, kCubic = 2, kLanczos3 = 3, kTriangular = 4, kGaussian = 5 };

inline const char* image_type_name(ImageType t) {
  switch (t) {
    case ImageType::kRGB: return "RGB";
    case ImageType::kBGR: return "BGR";
    case ImageType::kYCbCr: return "YCbCr";
    case ImageType::kGray: return "GRAY";
    case ImageType::kAnyData: return "ANY_DATA";
    case ImageType::kHSV: return "HSV";
  }
  return "?";
}

}  // namespace stoker
