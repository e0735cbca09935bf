#ifndef PHOTOPREP_CHEIF_SHIM_H
#define PHOTOPREP_CHEIF_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <libheif/heif.h>

#endif
