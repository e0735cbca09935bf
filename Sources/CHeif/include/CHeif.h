#ifndef PHOTOPREP_CHEIF_H
#define PHOTOPREP_CHEIF_H

#include <stddef.h>
#include <stdint.h>
#include <libheif/heif.h>

/// The part of libheif photoprep calls, loaded on first use (`photoprep_heif_load`) rather than linked: linking
/// libheif 1.15 runs its static initialisers in every process, 24.7 million instructions (about 4 ms here) before
/// `main`, whether or not a HEIF file is ever opened.
#define PHOTOPREP_HEIF_FUNCTIONS(X) \
    X(heif_context_alloc) \
    X(heif_context_free) \
    X(heif_context_set_maximum_image_size_limit) \
    X(heif_context_set_max_decoding_threads) \
    X(heif_context_read_from_memory_without_copy) \
    X(heif_context_get_primary_image_handle) \
    X(heif_context_get_number_of_top_level_images) \
    X(heif_image_handle_release) \
    X(heif_image_handle_get_width) \
    X(heif_image_handle_get_height) \
    X(heif_image_handle_get_ispe_width) \
    X(heif_image_handle_get_ispe_height) \
    X(heif_image_handle_get_luma_bits_per_pixel) \
    X(heif_image_handle_has_alpha_channel) \
    X(heif_image_handle_is_premultiplied_alpha) \
    X(heif_image_handle_get_number_of_depth_images) \
    X(heif_image_handle_get_number_of_thumbnails) \
    X(heif_image_handle_get_color_profile_type) \
    X(heif_image_handle_get_raw_color_profile_size) \
    X(heif_image_handle_get_raw_color_profile) \
    X(heif_image_handle_get_nclx_color_profile) \
    X(heif_nclx_color_profile_free) \
    X(heif_image_handle_get_number_of_metadata_blocks) \
    X(heif_image_handle_get_list_of_metadata_block_IDs) \
    X(heif_image_handle_get_metadata_size) \
    X(heif_image_handle_get_metadata) \
    X(heif_image_handle_get_metadata_content_type) \
    X(heif_decoding_options_alloc) \
    X(heif_decoding_options_free) \
    X(heif_decode_image) \
    X(heif_image_release) \
    X(heif_image_get_primary_width) \
    X(heif_image_get_primary_height) \
    X(heif_image_get_plane_readonly) \
    X(heif_image_get_bits_per_pixel_range) \
    X(heif_image_get_decoding_warnings)

#define PHOTOPREP_HEIF_FIELD(name) __typeof__(&name) _Nonnull name;
/// libheif's functions, by their own names.
struct photoprep_heif {
    PHOTOPREP_HEIF_FUNCTIONS(PHOTOPREP_HEIF_FIELD)
};
#undef PHOTOPREP_HEIF_FIELD

/// Loads libheif (`libheif.so.1`) once and returns its functions, or NULL with `dlerror`'s words in `error`
/// (`size` bytes, always terminated). Safe from any thread.
const struct photoprep_heif *_Nullable photoprep_heif_load(char *_Nonnull error, size_t size);

#endif
