// A scratch copy of a database someone else wrote (a Health Connect export), kept on disk sealed:
// AES-256-CTR under a key made at random for this process and kept only in its memory, so that
// reading a 1 GB export needs neither a gigabyte of memory nor a plaintext copy on disk. The copy is
// written by hreader_sealed_write and read by SQLite through the VFS "hreader-sealed" (read-only,
// immutable), which decrypts each read at its offset. HReaderStore's ForeignDatabase uses it.
#ifndef HREADER_SEALED_SCRATCH_H
#define HREADER_SEALED_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

/// The VFS's name, for sqlite3_open_v2.
#define HREADER_SEALED_VFS "hreader-sealed"

/// Makes the process's key (once) and registers the VFS (once). 0 on success.
int hreader_sealed_register(void);

/// A sealed file being written, from its first byte on.
typedef struct hreader_sealed_writer hreader_sealed_writer;

/// Starts writing the open file descriptor `fd` (not closed by the writer); NULL without memory or
/// OpenSSL.
hreader_sealed_writer *hreader_sealed_writer_new(int fd);
/// Encrypts and appends `count` bytes; 0 on success, else an errno.
int hreader_sealed_write(hreader_sealed_writer *writer, const uint8_t *bytes, size_t count);
void hreader_sealed_writer_free(hreader_sealed_writer *writer);

#endif
