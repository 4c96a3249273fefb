#ifndef HREADER_SANDBOXED_CHILD_H
#define HREADER_SANDBOXED_CHILD_H

#include <sys/types.h>

/// What a child may use. 0 leaves a limit as inherited.
typedef struct {
    unsigned long long address_space;   // RLIMIT_AS, bytes
    unsigned long long cpu_seconds;     // RLIMIT_CPU
    unsigned long long open_files;      // RLIMIT_NOFILE
} hreader_child_limits;

/// How the child was cut off from the network (`*isolation` after `hreader_child_spawn`).
enum {
    /// An empty network namespace (unshare CLONE_NEWUSER|CLONE_NEWNET, or CLONE_NEWNET alone as root),
    /// and the seccomp filter below.
    HREADER_CHILD_NAMESPACE_AND_SECCOMP = 1,
    /// The seccomp filter alone: socket() fails (EACCES) for every address family.
    HREADER_CHILD_SECCOMP = 2,
};

/// Starts the program at `path` (absolute; no PATH search) as a sandboxed child: `stdio` become its
/// descriptors 0, 1 and 2 (the caller closes its copies), every other descriptor is closed, it leads
/// a process group of its own, it runs in `/` with `envp` only, under the limits, with RLIMIT_FSIZE 0
/// and RLIMIT_CORE 0, no new privileges, killed when the parent dies, and a seccomp filter that fails
/// socket() and socketpair() and any open() that asks to write or create. Before exec it leaves the
/// network: an empty network namespace when the kernel allows it (unless `no_namespace`), else seccomp
/// only. `argv` and `envp` are built by the caller: nothing is allocated after fork.
/// Returns the child's pid, or -1 with errno set (the child's own errno when it could not isolate
/// itself or exec; then it has exited and been reaped).
pid_t hreader_child_spawn(const char *path, char *const argv[], char *const envp[], const hreader_child_limits *limits,
                          int no_namespace, const int stdio[3], int *isolation);

#endif
