#ifndef PHOTOPREP_CTURBOJPEG_SHIM_H
#define PHOTOPREP_CTURBOJPEG_SHIM_H

#include <stddef.h>
#include <turbojpeg.h>

/// TJSCALED() is a function-like macro Swift cannot see: the scaled size of one dimension.
static inline int photoprep_tj_scaled(int dimension, tjscalingfactor factor) {
    return TJSCALED(dimension, factor);
}

#endif
