// Loads SQLCipher on first use and fills the table the wrappers in include/CSQLCipher.h call through.
#include "CSQLCipher.h"
#include "CDynamicLibrary.h"
#include "COpenSSL.h"

#include <pthread.h>

const struct hreader_sqlcipher_functions *hreader_sqlcipher_table;
static struct hreader_sqlcipher_functions functions;

static void load(void) {
    // The soname of a normal install first, then other systems' names and Homebrew's paths.
    static const char *const names[] = { "libsqlcipher.so.1", "libsqlcipher.so.0", "libsqlcipher.so", "libsqlcipher.0.dylib", "/opt/homebrew/opt/sqlcipher/lib/libsqlcipher.0.dylib", "/usr/local/opt/sqlcipher/lib/libsqlcipher.0.dylib", 0 };
    static const char what[] = "SQLCipher", hint[] = "install SQLCipher 4.5 or newer (Debian: libsqlcipher1)";
    // hreader's OpenSSL first, so that it is initialised as COpenSSL's loader does it (SQLCipher
    // loads the same libcrypto).
    hreader_openssl();
    void *library = hreader_open_library(what, hint, names);
#define HREADER_RESOLVE(name) functions.name = (__typeof__(functions.name))hreader_library_symbol(library, what, hint, #name);
    HREADER_SQLCIPHER_FUNCTIONS(HREADER_RESOLVE)
#undef HREADER_RESOLVE
    __atomic_store_n(&hreader_sqlcipher_table, &functions, __ATOMIC_RELEASE);
}

const struct hreader_sqlcipher_functions *hreader_sqlcipher_load(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load);
    return hreader_sqlcipher_table;
}
