#ifndef HREADER_PROCESS_HARDENING_H
#define HREADER_PROCESS_HARDENING_H

/// Keeps what the process holds (the data key, decrypted pages, health data in memory) out of reach of
/// other processes of the same user and out of crash output: no core files (RLIMIT_CORE 0), not
/// dumpable (Linux: /proc/PID/environ, mem and ptrace closed to same-user processes such as a plugin
/// applet reading its parent), and, unless `keep_crash_handlers`, the crash signals back to their
/// default action so that Swift's backtracer does not print register and memory contents to stderr.
/// Returns 0, or -1 when a step failed (errno says which).
int hreader_harden_process(int keep_crash_handlers);

#endif
