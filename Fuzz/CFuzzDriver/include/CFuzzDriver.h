// libFuzzer's entry for programs that have their own main (SwiftPM always gives an executable one):
// https://llvm.org/docs/LibFuzzer.html#using-libfuzzer-as-a-library. Only declared here; it is linked
// from the compiler's libFuzzer runtime, and only referenced in builds with -DFUZZING (make fuzz).
#ifndef HREADER_CFUZZDRIVER_H
#define HREADER_CFUZZDRIVER_H
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));
#endif
