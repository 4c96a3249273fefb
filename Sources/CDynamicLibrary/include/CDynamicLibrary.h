#ifndef HREADER_CDYNAMICLIBRARY_H
#define HREADER_CDYNAMICLIBRARY_H

/// Opens the first library of `names` (a NULL-terminated list of sonames and paths) that loads, with
/// RTLD_NOW | RTLD_LOCAL. When none does, prints one line, "hreader: cannot load <what> (<reason>);
/// <hint>", to stderr and exits with status 1 (DESIGN.md §9: a missing library is "other failure").
void *hreader_open_library(const char *what, const char *hint, const char *const *names);

/// The address of `symbol` in `library`; prints one line and exits with status 1 when it is missing
/// (a library too old for hreader).
void *hreader_library_symbol(void *library, const char *what, const char *hint, const char *symbol);

#endif
