#ifndef PHOTOPREP_CPNG_SHIM_H
#define PHOTOPREP_CPNG_SHIM_H

#include <stddef.h>
#include <png.h>
#include <zlib.h>

/// png_image.message is a char array that imports as a tuple: hand it over as a C string.
static inline const char *photoprep_png_message(const png_image *image) {
    return image->message;
}

/// PNG_IMAGE_FAILED() is a macro over the warning_or_error bits.
static inline int photoprep_png_failed(const png_image *image) {
    return PNG_IMAGE_FAILED(*image);
}

/// Inflates a zlib stream (PNG iCCP payload) into `out`; returns the bytes written, or -1 on error or overflow.
static inline long photoprep_inflate(const unsigned char *in, size_t inSize, unsigned char *out, size_t outCapacity) {
    uLongf outSize = (uLongf)outCapacity;
    int rc = uncompress(out, &outSize, in, (uLong)inSize);
    return rc == Z_OK ? (long)outSize : -1;
}

#endif
