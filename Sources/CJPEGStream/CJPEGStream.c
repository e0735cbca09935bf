#include "CJPEGStream.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jerror.h>
#include <jpeglib.h>

enum { INPUT_BUFFER = 64 * 1024, MAX_SCANS = 500 };

struct photoprep_jpeg_stream {
    struct jpeg_decompress_struct info;
    struct jpeg_error_mgr errors;
    struct jpeg_source_mgr source;
    struct jpeg_progress_mgr progress;
    jmp_buf failed;
    int fd;
    int strict;
    int started;
    int end_of_file;
    char error[JMSG_LENGTH_MAX];
    char warning[JMSG_LENGTH_MAX];
    JOCTET buffer[INPUT_BUFFER];
};

static photoprep_jpeg_stream *stream_of(j_common_ptr info) {
    return (photoprep_jpeg_stream *)info->client_data;
}

static void error_exit(j_common_ptr info) {
    photoprep_jpeg_stream *stream = stream_of(info);
    info->err->format_message(info, stream->error);
    longjmp(stream->failed, 1);
}

/// Warnings as TurboJPEG reports them: the first one kept; with `strict`, an error.
static void emit_message(j_common_ptr info, int level) {
    photoprep_jpeg_stream *stream = stream_of(info);
    if (level >= 0) return;
    if (info->err->num_warnings++ == 0) info->err->format_message(info, stream->warning);
    if (stream->strict) {
        snprintf(stream->error, sizeof stream->error, "%s", stream->warning);
        longjmp(stream->failed, 1);
    }
}

/// TurboJPEG's TJFLAG_LIMITSCANS: a progressive file of thousands of tiny scans is a decompression bomb.
static void progress(j_common_ptr info) {
    photoprep_jpeg_stream *stream = stream_of(info);
    if (((j_decompress_ptr)info)->input_scan_number > MAX_SCANS) {
        snprintf(stream->error, sizeof stream->error, "Progressive JPEG image has more than %d scans", MAX_SCANS);
        longjmp(stream->failed, 1);
    }
}

static void init_source(j_decompress_ptr info) { (void)info; }

/// The next piece of the file; at its end, a fake EOI with libjpeg's own warning (as `jpeg_mem_src` does),
/// so that a truncated file decodes as far as it goes.
static boolean fill_input_buffer(j_decompress_ptr info) {
    photoprep_jpeg_stream *stream = stream_of((j_common_ptr)info);
    ssize_t n;
    do n = read(stream->fd, stream->buffer, INPUT_BUFFER); while (n < 0 && errno == EINTR);
    if (n < 0) {
        snprintf(stream->error, sizeof stream->error, "cannot read the file: %s", strerror(errno));
        longjmp(stream->failed, 1);
    }
    if (n == 0) {
        WARNMS(info, JWRN_JPEG_EOF);
        stream->buffer[0] = (JOCTET)0xFF;
        stream->buffer[1] = (JOCTET)JPEG_EOI;
        n = 2;
        stream->end_of_file = 1;
    }
    info->src->next_input_byte = stream->buffer;
    info->src->bytes_in_buffer = (size_t)n;
    return TRUE;
}

static void skip_input_data(j_decompress_ptr info, long count) {
    struct jpeg_source_mgr *source = info->src;
    if (count <= 0) return;
    while (count > (long)source->bytes_in_buffer) {
        count -= (long)source->bytes_in_buffer;
        (void)fill_input_buffer(info);
    }
    source->next_input_byte += count;
    source->bytes_in_buffer -= (size_t)count;
}

static void term_source(j_decompress_ptr info) { (void)info; }

static void fail(char *error, size_t size, const char *message) {
    if (size > 0) snprintf(error, size, "%s", message);
}

photoprep_jpeg_stream *photoprep_jpeg_open(
    int fd, int denominator, enum photoprep_jpeg_output output, int strict, char *error, size_t size) {
    photoprep_jpeg_stream *stream = calloc(1, sizeof *stream);
    if (!stream) {
        fail(error, size, "cannot allocate a decompressor");
        return NULL;
    }
    stream->fd = fd;
    stream->strict = strict;
    stream->info.err = jpeg_std_error(&stream->errors);
    stream->errors.error_exit = error_exit;
    stream->errors.emit_message = emit_message;
    stream->info.client_data = stream;
    if (setjmp(stream->failed)) {
        fail(error, size, stream->error);
        photoprep_jpeg_close(stream);
        return NULL;
    }
    jpeg_create_decompress(&stream->info);
    stream->source.init_source = init_source;
    stream->source.fill_input_buffer = fill_input_buffer;
    stream->source.skip_input_data = skip_input_data;
    stream->source.resync_to_restart = jpeg_resync_to_restart;
    stream->source.term_source = term_source;
    stream->info.src = &stream->source;
    stream->progress.progress_monitor = progress;
    stream->info.progress = &stream->progress;

    jpeg_read_header(&stream->info, TRUE);
    stream->info.out_color_space = output == PHOTOPREP_JPEG_GREY ? JCS_GRAYSCALE : JCS_RGB;
    stream->info.scale_num = 1;
    stream->info.scale_denom = (unsigned int)denominator;
    jpeg_start_decompress(&stream->info);
    stream->started = 1;
    return stream;
}

int photoprep_jpeg_width(const photoprep_jpeg_stream *stream) { return (int)stream->info.output_width; }
int photoprep_jpeg_height(const photoprep_jpeg_stream *stream) { return (int)stream->info.output_height; }

int photoprep_jpeg_read(photoprep_jpeg_stream *stream, unsigned char *out, size_t stride, int rows, char *error, size_t size) {
    if (setjmp(stream->failed)) {
        fail(error, size, stream->error);
        return -1;
    }
    JSAMPROW pointers[16];
    int done = 0;
    while (done < rows && stream->info.output_scanline < stream->info.output_height) {
        int ask = rows - done < 16 ? rows - done : 16;
        for (int i = 0; i < ask; i++) pointers[i] = out + (size_t)(done + i) * stride;
        done += (int)jpeg_read_scanlines(&stream->info, pointers, (JDIMENSION)ask);
    }
    return done;
}

const char *photoprep_jpeg_warning(const photoprep_jpeg_stream *stream) {
    return stream->errors.num_warnings > 0 ? stream->warning : NULL;
}

void photoprep_jpeg_close(photoprep_jpeg_stream *stream) {
    if (!stream) return;
    // jpeg_destroy frees everything whether or not the decompression finished (jpeg_finish_decompress would
    // read on to the end of the file, which nothing here needs).
    jpeg_destroy_decompress(&stream->info);
    free(stream);
}
