#ifndef HREADER_CSHIMS_H
#define HREADER_CSHIMS_H
// hreader's own small C shims, a header each, for what Swift cannot say or reach by itself. Not here:
// the lazily loaded libraries' headers and loaders (CSQLCipher, COpenSSL, ..., over CDynamicLibrary),
// which are .ci/gen-lazy-libraries.py's, and CByteSearch, whose _GNU_SOURCE (for memmem) would change
// how these headers' glibc types are declared, unlike the same types seen through other C modules.
#include "ProcessHardening.h"
#include "SandboxedChild.h"
#include "StandardOutput.h"
#endif
