#ifndef HREADER_CBYTESEARCH_H
#define HREADER_CBYTESEARCH_H
// memmem, which Swift's Glibc module does not declare (it is a GNU and BSD extension to string.h).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stddef.h>
#include <string.h>

static inline const void *hreader_memmem(const void *haystack, size_t haystack_count, const void *needle, size_t needle_count) {
    return memmem(haystack, haystack_count, needle, needle_count);
}
#endif
