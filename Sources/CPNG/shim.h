#ifndef PHOTOPREP_CPNG_SHIM_H
#define PHOTOPREP_CPNG_SHIM_H

#include <setjmp.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
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

/// Called with each decoded row: `width` pixels of `channels` samples of `bytes_per_sample` bytes (2: 16-bit,
/// native byte order); returns 0 to go on.
typedef int (*photoprep_png_row_callback)(
    void *context, const unsigned char *row, unsigned int width, unsigned int channels, unsigned int bytes_per_sample);

struct photoprep_png_source {
    const unsigned char *data;
    size_t size;
    size_t offset;
    char *message;
    size_t message_size;
    jmp_buf jump;
};

static inline void photoprep_png_read_data(png_structp png, png_bytep out, size_t length) {
    struct photoprep_png_source *source = (struct photoprep_png_source *)png_get_io_ptr(png);
    if (length > source->size - source->offset) png_error(png, "read beyond end of data");
    memcpy(out, source->data + source->offset, length);
    source->offset += length;
}

static inline void photoprep_png_error(png_structp png, png_const_charp text) {
    struct photoprep_png_source *source = (struct photoprep_png_source *)png_get_error_ptr(png);
    snprintf(source->message, source->message_size, "%s", text);
    longjmp(source->jump, 1);
}

/// Keeps the first warning in `message` (an error, if one follows, overwrites it).
static inline void photoprep_png_warning(png_structp png, png_const_charp text) {
    struct photoprep_png_source *source = (struct photoprep_png_source *)png_get_error_ptr(png);
    if (source->message[0] == 0) snprintf(source->message, source->message_size, "%s", text);
}

/// Reads a PNG with libpng's classic API and hands it over row by row: palette to RGB, tRNS to alpha, low-bit
/// grey to 8 bits, 16-bit samples kept (native byte order), a gAMA chunk honoured by converting to sRGB when
/// there is no sRGB or iCCP chunk (as browsers and the simplified API do), grey to RGB unless `grey`. Alpha
/// is kept: the caller composes it. A non-interlaced PNG is read one row at a time (`png_read_row`), so no
/// more than a row is held; an interlaced one needs its whole image (`png_read_image`). Ancillary chunks are
/// capped at 8 MB. Returns the channels per pixel (1 grey, 2 grey + alpha, 3 RGB, 4 RGB + alpha), with
/// libpng's first warning in `message` (empty when none), or 0 on error with libpng's message in `message`. The setjmp/longjmp of libpng's error handling stays inside
/// this function: `row` is called between libpng calls, never from within one.
static inline int photoprep_png_read_rows(
    const unsigned char *data, size_t size, int grey, photoprep_png_row_callback row, void *context,
    char *message, size_t message_size
) {
    struct photoprep_png_source source = { data, size, 0, message, message_size };
    if (message_size > 0) message[0] = 0;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source, photoprep_png_error, photoprep_png_warning);
    if (!png) { snprintf(message, message_size, "png_create_read_struct failed"); return 0; }
    png_infop info = png_create_info_struct(png);
    unsigned char *volatile buffer = NULL;
    png_bytep *volatile rows = NULL;
    if (!info || setjmp(source.jump)) {
        free(buffer);
        free(rows);
        png_destroy_read_struct(&png, info ? &info : NULL, NULL);
        return 0;
    }
    png_set_read_fn(png, &source, photoprep_png_read_data);
    png_set_chunk_malloc_max(png, 8 * 1000 * 1000);
    png_read_info(png, info);
    int colour = png_get_color_type(png, info);
    int passes = png_set_interlace_handling(png);
    png_set_expand(png);
    if (png_get_bit_depth(png, info) == 16) png_set_swap(png);
    png_fixed_point file_gamma = 0;
    if (!png_get_valid(png, info, PNG_INFO_sRGB) && !png_get_valid(png, info, PNG_INFO_iCCP)
        && png_get_gAMA_fixed(png, info, &file_gamma) && file_gamma > 0) {
        png_set_gamma_fixed(png, PNG_DEFAULT_sRGB, file_gamma);  /* the file's gamma to the sRGB screen's */
    }
    if (!grey && !(colour & PNG_COLOR_MASK_COLOR)) png_set_gray_to_rgb(png);
    png_read_update_info(png, info);
    int channels = png_get_channels(png, info);
    unsigned int sample = png_get_bit_depth(png, info) == 16 ? 2 : 1;
    png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
    size_t rowbytes = png_get_rowbytes(png, info);
    if (passes > 1) {
        buffer = (unsigned char *)malloc(rowbytes * height);
        rows = (png_bytep *)malloc(sizeof(png_bytep) * height);
        if (!buffer || !rows) png_error(png, "out of memory for an interlaced image");
        for (png_uint_32 y = 0; y < height; y++) rows[y] = buffer + rowbytes * y;
        png_read_image(png, rows);
        for (png_uint_32 y = 0; y < height; y++) {
            if (row(context, rows[y], (unsigned int)width, (unsigned int)channels, sample) != 0) png_error(png, "stopped");
        }
    } else {
        buffer = (unsigned char *)malloc(rowbytes);
        if (!buffer) png_error(png, "out of memory for a row");
        for (png_uint_32 y = 0; y < height; y++) {
            png_read_row(png, buffer, NULL);
            if (row(context, buffer, (unsigned int)width, (unsigned int)channels, sample) != 0) png_error(png, "stopped");
        }
    }
    free(buffer);
    free(rows);
    buffer = NULL;
    rows = NULL;
    png_destroy_read_struct(&png, &info, NULL);
    return channels;
}

#endif
