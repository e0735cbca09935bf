#ifndef PHOTOPREP_CWEBP_SHIM_H
#define PHOTOPREP_CWEBP_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <webp/decode.h>
#include <webp/demux.h>

/// WebPData is built here so that Swift hands over a pointer and a size (the inline WebPDemux and
/// WebPAnimDecoderNew take its address).
static inline WebPDemuxer *photoprep_webp_demux(const uint8_t *data, size_t size) {
    WebPData webp = { data, size };
    return WebPDemux(&webp);
}

static inline WebPAnimDecoder *photoprep_webp_anim_decoder(const uint8_t *data, size_t size, WEBP_CSP_MODE mode) {
    WebPAnimDecoderOptions options;
    if (!WebPAnimDecoderOptionsInit(&options)) return NULL;
    options.color_mode = mode;
    options.use_threads = 0;
    WebPData webp = { data, size };
    return WebPAnimDecoderNew(&webp, &options);
}

#endif
