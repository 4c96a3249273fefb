// sqlcipher.pc does not define SQLITE_HAS_CODEC; without it sqlite3_key() and friends are hidden.
// Spell the directory: /usr/include/sqlite3.h is the plain SQLite header.
#ifndef HREADER_CSQLCIPHER_SHIM_H
#define HREADER_CSQLCIPHER_SHIM_H
#define SQLITE_HAS_CODEC 1
#define SQLITE_TEMP_STORE 2
#include <sqlcipher/sqlite3.h>

// sqlite3_config is variadic, which Swift cannot call. Memory statistics make every sqlite3_malloc
// take a global mutex; hreader reads none of them, and an import allocates millions of times.
static inline int hreader_sqlite3_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
