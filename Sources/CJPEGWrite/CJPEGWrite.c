#include "CJPEGWrite.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

struct failure {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char *message;
    size_t size;
};

/// libjpeg reports errors by calling this, which must not return: back to `photoprep_jpeg_write` with the message.
static void error_exit(j_common_ptr info) {
    struct failure *failure = (struct failure *)info->err;
    char message[JMSG_LENGTH_MAX];
    info->err->format_message(info, message);
    snprintf(failure->message, failure->size, "%s", message);
    longjmp(failure->jump, 1);
}

static void no_output(j_common_ptr info) { (void)info; }

int photoprep_jpeg_write(
    const unsigned char *pixels, int width, int height, int channels, struct photoprep_jpeg_settings settings,
    unsigned char **out, unsigned long *size, char *error, size_t error_size) {
    struct jpeg_compress_struct info;
    struct failure failure;
    memset(&info, 0, sizeof info);
    info.err = jpeg_std_error(&failure.manager);
    failure.manager.error_exit = error_exit;
    failure.manager.output_message = no_output;
    failure.message = error;
    failure.size = error_size;
    *out = NULL;
    *size = 0;
    if (setjmp(failure.jump)) {
        jpeg_destroy_compress(&info);
        free(*out);
        *out = NULL;
        return -1;
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, out, size);
    info.image_width = (JDIMENSION)width;
    info.image_height = (JDIMENSION)height;
    info.input_components = channels;
    info.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, settings.quality, TRUE);
    info.dct_method = JDCT_ISLOW;
    info.optimize_coding = settings.optimize_coding ? TRUE : FALSE;
    if (channels == 3 && settings.full_chroma) {
        info.comp_info[0].h_samp_factor = 1;
        info.comp_info[0].v_samp_factor = 1;
    }
    if (settings.progressive) jpeg_simple_progression(&info);
    jpeg_start_compress(&info, TRUE);
    JSAMPROW row;
    while (info.next_scanline < info.image_height) {
        row = (JSAMPROW)(pixels + (size_t)info.next_scanline * (size_t)width * (size_t)channels);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    return 0;
}
