#ifndef PHOTOPREP_CJPEGSTREAM_H
#define PHOTOPREP_CJPEGSTREAM_H

#include <stddef.h>

/// A JPEG decoded row by row with libjpeg-turbo's libjpeg API (the library TurboJPEG wraps), reading its file
/// 64 KiB at a time: neither the whole file nor the whole decoded image is ever held. Errors are caught here
/// (libjpeg reports them with longjmp, which Swift cannot take) and returned as text, in TurboJPEG's words.
typedef struct photoprep_jpeg_stream photoprep_jpeg_stream;

/// The colour space the rows come out in.
enum photoprep_jpeg_output { PHOTOPREP_JPEG_GREY = 1, PHOTOPREP_JPEG_RGB = 3 };

/// Opens the JPEG file `fd` (read from its current offset; not closed here), reads its header and starts
/// decompressing at 1/`denominator` scale (1, 2, 4 or 8). `strict` makes the first warning an error. Returns
/// NULL with the reason in `error` (`size` bytes, always terminated).
photoprep_jpeg_stream *_Nullable photoprep_jpeg_open(
    int fd, int denominator, enum photoprep_jpeg_output output, int strict, char *_Nonnull error, size_t size);

/// The size of the rows that come out (after scaling).
int photoprep_jpeg_width(const photoprep_jpeg_stream *_Nonnull stream);
int photoprep_jpeg_height(const photoprep_jpeg_stream *_Nonnull stream);

/// Decodes the next `rows` rows into `out`, `stride` bytes apart. Returns the rows decoded, or -1 with the
/// reason in `error`. A damaged file's remaining rows come out grey, with a warning (`photoprep_jpeg_warning`).
int photoprep_jpeg_read(
    photoprep_jpeg_stream *_Nonnull stream, unsigned char *_Nonnull out, size_t stride, int rows,
    char *_Nonnull error, size_t size);

/// libjpeg's first warning (a truncated file, junk between markers …), or NULL when it had none.
const char *_Nullable photoprep_jpeg_warning(const photoprep_jpeg_stream *_Nonnull stream);

/// Ends the decompression and frees everything.
void photoprep_jpeg_close(photoprep_jpeg_stream *_Nullable stream);

#endif
