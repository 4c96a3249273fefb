// Loads libxml2 on first use and fills the table the wrappers in include/CLibXML2.h call through.
#include "CLibXML2.h"
#include "CDynamicLibrary.h"

#include <pthread.h>

const struct hreader_libxml2_functions *hreader_libxml2_table;
static struct hreader_libxml2_functions functions;

static void load(void) {
    // The soname of a normal install first, then other systems' names and Homebrew's paths.
    static const char *const names[] = { "libxml2.so.2", "libxml2.so", "libxml2.2.dylib", "/usr/lib/libxml2.2.dylib", 0 };
    static const char what[] = "libxml2", hint[] = "install libxml2 (Debian: libxml2)";
    void *library = hreader_open_library(what, hint, names);
#define HREADER_RESOLVE(name) functions.name = (__typeof__(functions.name))hreader_library_symbol(library, what, hint, #name);
    HREADER_LIBXML2_FUNCTIONS(HREADER_RESOLVE)
#undef HREADER_RESOLVE
    __atomic_store_n(&hreader_libxml2_table, &functions, __ATOMIC_RELEASE);
}

const struct hreader_libxml2_functions *hreader_libxml2_load(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load);
    return hreader_libxml2_table;
}
