// Loads OpenSSL's libcrypto on first use and fills the table the wrappers in include/COpenSSL.h call through.
#include "COpenSSL.h"
#include "CDynamicLibrary.h"

#include <pthread.h>

const struct hreader_openssl_functions *hreader_openssl_table;
static struct hreader_openssl_functions functions;

static void load(void) {
    // The soname of a normal install first, then other systems' names and Homebrew's paths.
    static const char *const names[] = { "libcrypto.so.3", "libcrypto.so", "libcrypto.3.dylib", "/opt/homebrew/opt/openssl@3/lib/libcrypto.3.dylib", "/usr/local/opt/openssl@3/lib/libcrypto.3.dylib", 0 };
    static const char what[] = "OpenSSL's libcrypto", hint[] = "install OpenSSL 3 (Debian: libssl3)";
    void *library = hreader_open_library(what, hint, names);
#define HREADER_RESOLVE(name) functions.name = (__typeof__(functions.name))hreader_library_symbol(library, what, hint, #name);
    HREADER_OPENSSL_FUNCTIONS(HREADER_RESOLVE)
#undef HREADER_RESOLVE
    // Before anything else initialises OpenSSL (SQLCipher loads it too, and calls it later): no
    // OPENSSL_cleanup at exit, which freed every provider and table one by one, a fifth of a
    // millisecond of every command, for memory the process's end returns anyway.
    functions.OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_CONFIG, NULL);
    __atomic_store_n(&hreader_openssl_table, &functions, __ATOMIC_RELEASE);
}

const struct hreader_openssl_functions *hreader_openssl_load(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load);
    return hreader_openssl_table;
}
