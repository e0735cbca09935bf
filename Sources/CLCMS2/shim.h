#ifndef PHOTOPREP_CLCMS2_SHIM_H
#define PHOTOPREP_CLCMS2_SHIM_H

#include <lcms2.h>

/// cmsSigProfileDescriptionTag and cmsSigCopyrightTag are enum constants of a 32-bit signature type
/// that Swift imports with another integer type: handed over as the tag type cmsWriteTag takes.
static inline cmsTagSignature photoprep_cms_description_tag(void) { return cmsSigProfileDescriptionTag; }
static inline cmsTagSignature photoprep_cms_copyright_tag(void) { return cmsSigCopyrightTag; }

#endif
