#ifndef HREADER_STANDARD_OUTPUT_H
#define HREADER_STANDARD_OUTPUT_H

#include <stdio.h>

/// C's stdout, the stream Swift.print writes to. Swift 6 refuses to read C's `stdout` (a mutable
/// global) from Swift; this reads it.
static inline FILE *hreader_stdout(void) { return stdout; }

#endif
