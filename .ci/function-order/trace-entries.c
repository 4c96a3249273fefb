// trace-entries ENTRIES OUT COMMAND [ARGS…]: which functions of COMMAND's executable a run enters, in
// the order it first enters them. ENTRIES holds the executable's function entry points as offsets from
// its load address (hex, one a line, sorted ascending); OUT receives those entered, each once.
//
// A developer's tool for .ci/gen-function-order.sh (not built by the package or the tests): it stops the
// command at exec under ptrace, writes a breakpoint (int3) over the first byte of every function through
// /proc/PID/mem, and on each hit puts the byte back and records the function. A function costs one trap,
// whatever it does after, so a whole command runs in well under a second.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t *entries;
static unsigned char *saved;
static size_t count;

static void fail(const char *what) {
    fprintf(stderr, "trace-entries: %s: %s\n", what, strerror(errno));
    exit(1);
}

static long entry_index(uint64_t offset) {
    size_t low = 0, high = count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (entries[middle] < offset) low = middle + 1; else high = middle;
    }
    return low < count && entries[low] == offset ? (long)low : -1;
}

static void read_entries(const char *path) {
    FILE *file = fopen(path, "r");
    if (!file) fail(path);
    size_t capacity = 1 << 16;
    entries = malloc(capacity * sizeof *entries);
    unsigned long long value;
    while (fscanf(file, "%llx", &value) == 1) {
        if (count == capacity) entries = realloc(entries, (capacity *= 2) * sizeof *entries);
        if (!entries) fail("memory");
        if (count && value <= entries[count - 1]) { fprintf(stderr, "trace-entries: %s is not sorted and unique\n", path); exit(1); }
        entries[count++] = value;
    }
    fclose(file);
    saved = malloc(count ? count : 1);
}

// The load address of the traced executable: the start of its first mapping less that mapping's offset.
static uint64_t load_address(pid_t pid) {
    char path[64], executable[4096], line[8192];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t length = readlink(path, executable, sizeof executable - 1);
    if (length < 0) fail(path);
    executable[length] = 0;
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *maps = fopen(path, "r");
    if (!maps) fail(path);
    uint64_t address = 0;
    while (!address && fgets(line, sizeof line, maps)) {
        unsigned long start, end, offset;
        char permissions[8];
        const char *name = strchr(line, '/');
        if (sscanf(line, "%lx-%lx %7s %lx", &start, &end, permissions, &offset) == 4 && name && strncmp(name, executable, (size_t)length) == 0)
            address = start - offset;
    }
    fclose(maps);
    if (!address) { fprintf(stderr, "trace-entries: %s is not mapped\n", executable); exit(1); }
    return address;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: trace-entries ENTRIES OUT COMMAND [ARGS...]\n"); return 2; }
    read_entries(argv[1]);
    FILE *out = fopen(argv[2], "w");
    if (!out) fail(argv[2]);
    pid_t pid = fork();
    if (pid < 0) fail("fork");
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, STDOUT_FILENO);
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        execv(argv[3], argv + 3);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status)) { fprintf(stderr, "trace-entries: %s did not start\n", argv[3]); return 1; }
    uint64_t base = load_address(pid);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int memory = open(path, O_RDWR);
    if (memory < 0) fail(path);
    const unsigned char trap = 0xCC;
    for (size_t i = 0; i < count; i++) {
        if (pread(memory, &saved[i], 1, (off_t)(base + entries[i])) != 1 || pwrite(memory, &trap, 1, (off_t)(base + entries[i])) != 1)
            fail("writing a breakpoint");
    }
    // Threads the command starts are traced too (a breakpoint in an untraced thread would kill it).
    if (ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL) < 0) fail("ptrace options");
    unsigned char *hit = calloc(count ? count : 1, 1);
    size_t entered = 0;
    int main_status = 0;
    pid_t stopped = pid;
    int signal_to_pass = 0;
    for (;;) {
        if (ptrace(PTRACE_CONT, stopped, 0, signal_to_pass) < 0 && errno != ESRCH) fail("continuing");
        stopped = waitpid(-1, &status, __WALL);
        if (stopped < 0) break;
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            if (stopped == pid) { main_status = status; break; }
            continue;
        }
        signal_to_pass = WSTOPSIG(status);
        // A new thread's first stop, and the clone event itself, are not signals for the command.
        if (status >> 16 != 0 || (signal_to_pass == SIGSTOP && stopped != pid)) { signal_to_pass = 0; continue; }
        if (signal_to_pass != SIGTRAP) continue;
        struct user_regs_struct registers;
        if (ptrace(PTRACE_GETREGS, stopped, 0, &registers) < 0) fail("reading registers");
        long i = entry_index(registers.rip - 1 - base);
        if (i < 0) continue;   // a trap that is not one of ours goes to the command
        // Two threads may stop on one breakpoint: the second finds the byte back already.
        if (pwrite(memory, &saved[i], 1, (off_t)(registers.rip - 1)) != 1) fail("removing a breakpoint");
        registers.rip -= 1;
        if (ptrace(PTRACE_SETREGS, stopped, 0, &registers) < 0) fail("writing registers");
        if (!hit[i]) { hit[i] = 1; fprintf(out, "%llx\n", (unsigned long long)entries[i]); entered++; }
        signal_to_pass = 0;
    }
    fclose(out);
    fprintf(stderr, "trace-entries: %zu of %zu functions entered by %s\n", entered, count, argv[3]);
    return WIFEXITED(main_status) ? WEXITSTATUS(main_status) : 1;
}
