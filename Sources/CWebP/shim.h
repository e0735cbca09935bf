#ifndef PHOTOPREP_CWEBP_SHIM_H
#define PHOTOPREP_CWEBP_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>
#include <webp/mux.h>

/// A WebP bitstream with an ICC profile (ICCP chunk) in its container; 0 on failure. `out` is freed with WebPDataClear.
static inline int photoprep_webp_with_icc(const uint8_t *webp, size_t webpSize, const uint8_t *icc, size_t iccSize, WebPData *out) {
    WebPMux *mux = WebPMuxNew();
    if (mux == NULL) return 0;
    WebPData image = { webp, webpSize }, profile = { icc, iccSize };
    int ok = WebPMuxSetImage(mux, &image, 1) == WEBP_MUX_OK && WebPMuxSetChunk(mux, "ICCP", &profile, 1) == WEBP_MUX_OK
        && WebPMuxAssemble(mux, out) == WEBP_MUX_OK;
    WebPMuxDelete(mux);
    return ok;
}

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
