#define _GNU_SOURCE
#include "SandboxedChild.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <pthread.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#endif

#if defined(__x86_64__)
#define HREADER_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define HREADER_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/// What the child tells the parent through the status pipe before exec (or instead of it).
struct child_report { int stage; int error; int isolation; };

static void report(int fd, int stage, int error, int isolation) {
    struct child_report r = { stage, error, isolation };
    ssize_t ignored = write(fd, &r, sizeof r);
    (void)ignored;
}

#if defined(__linux__) && defined(HREADER_AUDIT_ARCH)
static int install_filter(void) {
    const unsigned write_flags = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND
        | 020000000     // the kernel's __O_TMPFILE: O_TMPFILE less O_DIRECTORY, which readers use too
        ;
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HREADER_AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
        // The x32 ABI's numbers have bit 30 set: not ours.
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
#endif
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socketpair, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
#ifdef __NR_openat2
        // Its flags are behind a pointer: make callers fall back to openat.
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
#endif
#ifdef __NR_creat
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_creat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
#endif
#ifdef __NR_open
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_open, 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, write_flags, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
#endif
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, write_flags, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = { (unsigned short)(sizeof filter / sizeof filter[0]), filter };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program);
}
#endif

static void set_limit(int resource, unsigned long long value) {
    struct rlimit limit = { (rlim_t)value, (rlim_t)value };
    (void)setrlimit(resource, &limit);
}

/// In the child, after fork (or in the clone that borrows the parent's memory until exec: it writes
/// nothing but its own stack and descriptors): only async-signal-safe calls. It never returns.
__attribute__((noreturn))
static void become_child(int status_fd, const int stdio[3], const char *path, char *const argv[],
                         char *const envp[], const hreader_child_limits *limits, int no_namespace) {
    int isolation = HREADER_CHILD_SECCOMP;
#ifdef __linux__
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) { report(status_fd, 1, errno, 0); _exit(127); }
    if (!no_namespace) {
        if (unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 || unshare(CLONE_NEWNET) == 0) isolation = HREADER_CHILD_NAMESPACE_AND_SECCOMP;
    }
#endif
    // Its own process group, so that a timeout kills whatever it started too.
    (void)setpgid(0, 0);
    for (int i = 0; i < 3; i++) {
        // dup2 onto itself would keep close-on-exec: move it first.
        int fd = stdio[i];
        if (fd == i) { fd = fcntl(fd, F_DUPFD_CLOEXEC, 3); if (fd < 0) { report(status_fd, 2, errno, 0); _exit(127); } }
        if (dup2(fd, i) < 0) { report(status_fd, 2, errno, 0); _exit(127); }
    }
    // Every other descriptor goes (the status pipe is close-on-exec).
#ifdef SYS_close_range
    if ((status_fd > 3 && syscall(SYS_close_range, 3, (unsigned)status_fd - 1, 0) != 0)
        || syscall(SYS_close_range, (unsigned)status_fd + 1, ~0U, 0) != 0)
#endif
    {
        struct rlimit open = { 1024, 1024 };
        (void)getrlimit(RLIMIT_NOFILE, &open);
        long last = open.rlim_cur == RLIM_INFINITY || open.rlim_cur > 65536 ? 65536 : (long)open.rlim_cur;
        for (long fd = 3; fd < last; fd++) if (fd != status_fd) (void)close((int)fd);
    }
    if (chdir("/") != 0) { report(status_fd, 3, errno, 0); _exit(127); }
    for (int s = 1; s < 32; s++) (void)signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    set_limit(RLIMIT_CORE, 0);
    set_limit(RLIMIT_FSIZE, 0);
    if (limits->address_space) set_limit(RLIMIT_AS, limits->address_space);
    if (limits->cpu_seconds) set_limit(RLIMIT_CPU, limits->cpu_seconds);
    if (limits->open_files) set_limit(RLIMIT_NOFILE, limits->open_files);
#if defined(__linux__) && defined(HREADER_AUDIT_ARCH)
    if (install_filter() != 0) { report(status_fd, 4, errno, 0); _exit(127); }
#else
    // No seccomp here: without a network namespace either, refuse to run the child at all.
    if (isolation != HREADER_CHILD_NAMESPACE_AND_SECCOMP) { report(status_fd, 4, ENOSYS, 0); _exit(127); }
#endif
    report(status_fd, 0, 0, isolation);
    execve(path, argv, envp);
    report(status_fd, 5, errno, isolation);
    _exit(127);
}

#ifdef __linux__
struct spawn_arguments {
    int status_read, status_write;
    const int *stdio;
    const char *path;
    char *const *argv;
    char *const *envp;
    const hreader_child_limits *limits;
    int no_namespace;
};

static int spawned_child(void *argument) {
    const struct spawn_arguments *a = argument;
    close(a->status_read);
    become_child(a->status_write, a->stdio, a->path, a->argv, a->envp, a->limits, a->no_namespace);
}

/// The child as posix_spawn makes it (CLONE_VM | CLONE_VFORK): it runs on a stack of its own in the
/// parent's memory, and the parent waits until it has exec'd or exited. A fork copied the page tables
/// of this large process first: 3 to 8 ms before the helper could start (docs/documents.md).
static pid_t clone_child(struct spawn_arguments *arguments) {
    const size_t size = 256 * 1024;
    void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) return -1;
    pid_t pid = clone(spawned_child, (char *)stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD, arguments);
    int saved = errno;
    munmap(stack, size);
    errno = saved;
    return pid;
}
#endif

pid_t hreader_child_spawn(const char *path, char *const argv[], char *const envp[], const hreader_child_limits *limits,
                          int no_namespace, const int stdio[3], int *isolation) {
    int status[2] = { -1, -1 };
#ifdef __linux__
    if (pipe2(status, O_CLOEXEC) != 0) return -1;
#else
    if (pipe(status) != 0) return -1;
    fcntl(status[0], F_SETFD, FD_CLOEXEC);
    fcntl(status[1], F_SETFD, FD_CLOEXEC);
#endif
    // Block signals around fork so that no handler of the parent runs in the child before exec.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
#ifdef __linux__
    struct spawn_arguments arguments = { status[0], status[1], stdio, path, argv, envp, limits, no_namespace };
    pid_t pid = clone_child(&arguments);
#else
    pid_t pid = fork();
    if (pid == 0) {
        close(status[0]);
        become_child(status[1], stdio, path, argv, envp, limits, no_namespace);
    }
#endif
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    close(status[1]);
    if (pid < 0) { close(status[0]); errno = saved; return -1; }
    // The child's reports until exec closes the pipe: the last one says how far it got.
    struct child_report last = { -1, ECHILD, 0 }, r;
    for (;;) {
        ssize_t n = read(status[0], &r, sizeof r);
        if (n == (ssize_t)sizeof r) { last = r; continue; }
        if (n < 0 && errno == EINTR) continue;
        break;
    }
    close(status[0]);
    if (last.stage != 0) {
        int code;
        while (waitpid(pid, &code, 0) < 0 && errno == EINTR) {}
        errno = last.error ? last.error : ECHILD;
        return -1;
    }
    *isolation = last.isolation;
    return pid;
}
