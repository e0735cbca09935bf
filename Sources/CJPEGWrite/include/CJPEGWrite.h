#ifndef PHOTOPREP_CJPEGWRITE_H
#define PHOTOPREP_CJPEGWRITE_H

#include <stddef.h>

/// How a JPEG is written: the choices TurboJPEG 2.1's `tjCompress2` does not offer (optimised Huffman tables on a
/// baseline file) next to the ones it does.
struct photoprep_jpeg_settings {
    /// libjpeg's quality, 1–100 (`jpeg_set_quality`, baseline tables).
    int quality;
    /// Full-resolution chroma (4:4:4) instead of 4:2:0; ignored for grey.
    int full_chroma;
    /// A progressive file (`jpeg_simple_progression`); its Huffman tables are always optimised.
    int progressive;
    /// Huffman tables made for this image (a second pass over the coefficients) instead of the standard ones.
    int optimize_coding;
};

/// Encodes `height` rows of `width` pixels (`channels` 1: grey, 3: RGB), packed, with libjpeg-turbo's libjpeg API and the
/// accurate integer DCT, into a buffer it allocates: `*out` (`*size` bytes), to be released with `free`. Returns 0, or -1
/// with libjpeg's message in `error` (`error_size` bytes, always terminated).
int photoprep_jpeg_write(
    const unsigned char *_Nonnull pixels, int width, int height, int channels, struct photoprep_jpeg_settings settings,
    unsigned char *_Nullable *_Nonnull out, unsigned long *_Nonnull size, char *_Nonnull error, size_t error_size);

#endif
