#include "CDynamicLibrary.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *hreader_open_library(const char *what, const char *hint, const char *const *names) {
    // The first name is the one a normal install has: its failure says the most. Copied, as the next
    // dlopen frees the text dlerror() returned.
    char first_error[512] = "no library named";
    for (const char *const *name = names; *name; name++) {
        void *library = dlopen(*name, RTLD_NOW | RTLD_LOCAL);
        if (library) return library;
        const char *error = dlerror();
        if (name == names) snprintf(first_error, sizeof first_error, "%s", error ? error : *name);
    }
    fprintf(stderr, "hreader: cannot load %s (%s); %s\n", what, first_error, hint);
    exit(1);
}

void *hreader_library_symbol(void *library, const char *what, const char *hint, const char *symbol) {
    void *address = dlsym(library, symbol);
    if (!address) {
        fprintf(stderr, "hreader: the %s installed lacks %s; %s\n", what, symbol, hint);
        exit(1);
    }
    return address;
}
