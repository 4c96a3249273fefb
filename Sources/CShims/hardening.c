#include "ProcessHardening.h"

#include <signal.h>
#include <sys/resource.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

int hreader_harden_process(int keep_crash_handlers) {
    int result = 0;
    struct rlimit none = { 0, 0 };
    if (setrlimit(RLIMIT_CORE, &none) != 0) result = -1;
#ifdef __linux__
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) result = -1;
#endif
    if (!keep_crash_handlers) {
        static const int crashes[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP };
        for (unsigned i = 0; i < sizeof crashes / sizeof crashes[0]; i++) {
            if (signal(crashes[i], SIG_DFL) == SIG_ERR) result = -1;
        }
    }
    return result;
}
