// FITS files (the astronomy format): the header-data units (HDUs) of a file and the images they
// hold, read straight from the file (experimental.readers.fits).
//
// A FITS file is a chain of HDUs, each a header of 80-character "KEYWORD = value" cards in
// 2880-byte blocks, ended by an END card, and then its data, padded to 2880 bytes. HDU 1 is the
// primary one; images are the primary HDU's data and IMAGE extensions. Pixels are big-endian
// (BITPIX 8, 16, 32, 64 bits of integer, -32 and -64 of IEEE float), NAXIS1 the fastest axis.
//
// As cfitsio (which DALI reads with) gives them: the shape is NAXISn reversed (NumPy's order,
// as astropy shows it); the values are BZERO + BSCALE * stored, in the "equivalent" type that
// holds them (cfitsio's fits_get_img_equivtype: BITPIX 16 with BZERO 32768 is uint16, integer
// scalings the narrowest integer type holding the range, other scalings float32 for 8/16-bit
// storage and float64 for 32/64-bit). Tile-compressed images (a BINTABLE with ZIMAGE = T) and
// tables are refused by name.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "readers/random_access_file.h"

namespace stoker::readers::fits {

struct Image {
  DType dtype = DType::kNone;  // the equivalent type of the values
  Shape shape;                 // NAXISn reversed
  int bitpix = 0;              // as stored
  double bscale = 1, bzero = 0;
  int64_t data_offset = 0;
};

// The image of HDU `hdu` (1-based). Errors: Error(kDecode) for a file that is not FITS or is cut
// short, Error(kInvalidArgument) for an HDU past the file's last, Error(kUnsupported) for an HDU
// that is not an image; each names the file and the HDU.
Image find_image(const RandomAccessFile& file, int hdu);

// The image's values, converted as described above, into `dst` (volume(shape) elements of
// image.dtype).
void read_image(const RandomAccessFile& file, const Image& image, void* dst);

}  // namespace stoker::readers::fits
