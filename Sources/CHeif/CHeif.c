#include "CHeif.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct photoprep_heif functions;
static const struct photoprep_heif *loaded;
static char failure[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    // Kept open for the process's life: its functions are called from any thread at any time.
    void *library = dlopen("libheif.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(failure, sizeof failure, "%s", dlerror());
        return;
    }
#define PHOTOPREP_HEIF_RESOLVE(name) \
    if (!(functions.name = (__typeof__(&name))dlsym(library, #name))) { \
        snprintf(failure, sizeof failure, "libheif.so.1 has no %s", #name); \
        return; \
    }
    PHOTOPREP_HEIF_FUNCTIONS(PHOTOPREP_HEIF_RESOLVE)
#undef PHOTOPREP_HEIF_RESOLVE
    loaded = &functions;
}

const struct photoprep_heif *photoprep_heif_load(char *error, size_t size) {
    pthread_once(&once, load);
    if (!loaded && size > 0) snprintf(error, size, "%s", failure);
    return loaded;
}
