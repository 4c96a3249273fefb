// The sealed scratch file and its VFS (include/SealedScratch.h). SQLite and OpenSSL are reached
// through the lazy loaders' wrappers, like every other call hreader makes to them.
#include "CSQLCipher.h"
#include "COpenSSL.h"
#include "SealedScratch.h"

#include <errno.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

static unsigned char sealed_key[32];
static sqlite3_vfs sealed_vfs;
static sqlite3_vfs *underlying;
static int registered = -1;
static pthread_once_t once = PTHREAD_ONCE_INIT;

// The counter block of byte `offset`: the number of its 16-byte block, big-endian.
static void counter_block(unsigned char iv[16], sqlite3_int64 offset) {
    uint64_t block = (uint64_t)offset / 16;
    memset(iv, 0, 16);
    for (int i = 0; i < 8; i++) iv[15 - i] = (unsigned char)(block >> (8 * i));
}

// Applies the key stream from `offset` on to `count` bytes in place (encrypting and decrypting are
// the same in CTR mode).
static int crypt_at(EVP_CIPHER_CTX *ctx, unsigned char *bytes, int count, sqlite3_int64 offset) {
    unsigned char iv[16], skipped[16];
    static const unsigned char zeros[16];
    int written = 0;
    counter_block(iv, offset);
    if (EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, iv) != 1) return -1;
    int into = (int)(offset % 16);
    if (into > 0 && EVP_EncryptUpdate(ctx, skipped, &written, zeros, into) != 1) return -1;
    if (count > 0 && EVP_EncryptUpdate(ctx, bytes, &written, bytes, count) != 1) return -1;
    return 0;
}

static EVP_CIPHER_CTX *new_context(void) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return NULL;
    if (EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), NULL, sealed_key, NULL) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

// MARK: The file

typedef struct {
    sqlite3_file base;
    EVP_CIPHER_CTX *ctx;
    sqlite3_file *real;   // the underlying VFS's file, in the same allocation, after this struct
} sealed_file;

static int sealed_close(sqlite3_file *file) {
    sealed_file *f = (sealed_file *)file;
    int rc = f->real->pMethods ? f->real->pMethods->xClose(f->real) : SQLITE_OK;
    if (f->ctx) EVP_CIPHER_CTX_free(f->ctx);
    f->ctx = NULL;
    return rc;
}

static int sealed_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    sealed_file *f = (sealed_file *)file;
    int rc = f->real->pMethods->xRead(f->real, buffer, amount, offset);
    if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) return rc;
    // A short read leaves zeros past the end, which stay zeros (SQLite reads them as such).
    if (rc == SQLITE_OK && crypt_at(f->ctx, buffer, amount, offset) != 0) return SQLITE_IOERR_READ;
    if (rc == SQLITE_IOERR_SHORT_READ) {
        sqlite3_int64 size = 0;
        if (f->real->pMethods->xFileSize(f->real, &size) != SQLITE_OK) return SQLITE_IOERR_READ;
        int present = size > offset ? (int)(size - offset < amount ? size - offset : amount) : 0;
        if (crypt_at(f->ctx, buffer, present, offset) != 0) return SQLITE_IOERR_READ;
    }
    return rc;
}

static int sealed_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    (void)file; (void)buffer; (void)amount; (void)offset;
    return SQLITE_READONLY;
}

static int sealed_truncate(sqlite3_file *file, sqlite3_int64 size) { (void)file; (void)size; return SQLITE_READONLY; }
static int sealed_sync(sqlite3_file *file, int flags) { (void)file; (void)flags; return SQLITE_OK; }

static int sealed_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    sealed_file *f = (sealed_file *)file;
    return f->real->pMethods->xFileSize(f->real, size);
}

// Immutable: SQLite takes no locks on it.
static int sealed_lock(sqlite3_file *file, int level) { (void)file; (void)level; return SQLITE_OK; }
static int sealed_unlock(sqlite3_file *file, int level) { (void)file; (void)level; return SQLITE_OK; }
static int sealed_check_reserved(sqlite3_file *file, int *out) { (void)file; *out = 0; return SQLITE_OK; }
static int sealed_file_control(sqlite3_file *file, int op, void *arg) { (void)file; (void)op; (void)arg; return SQLITE_NOTFOUND; }

static int sealed_sector_size(sqlite3_file *file) {
    sealed_file *f = (sealed_file *)file;
    return f->real->pMethods->xSectorSize(f->real);
}

static int sealed_device_characteristics(sqlite3_file *file) { (void)file; return SQLITE_IOCAP_IMMUTABLE; }

// Version 1: no shared memory and no memory mapping, so every read comes through sealed_read.
static const sqlite3_io_methods sealed_methods = {
    1, sealed_close, sealed_read, sealed_write, sealed_truncate, sealed_sync, sealed_file_size, sealed_lock, sealed_unlock,
    sealed_check_reserved, sealed_file_control, sealed_sector_size, sealed_device_characteristics,
    NULL, NULL, NULL, NULL, NULL, NULL,
};

// MARK: The VFS

// Only the main database, read-only: a journal, a WAL or a temporary file is never opened through it.
static int sealed_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out) {
    (void)vfs;
    sealed_file *f = (sealed_file *)file;
    memset(f, 0, sizeof(*f));
    if (!(flags & SQLITE_OPEN_MAIN_DB) || !(flags & SQLITE_OPEN_READONLY) || name == NULL) return SQLITE_CANTOPEN;
    f->real = (sqlite3_file *)(f + 1);
    f->ctx = new_context();
    if (f->ctx == NULL) return SQLITE_NOMEM;
    int rc = underlying->xOpen(underlying, name, f->real, flags, out);
    if (rc != SQLITE_OK) {
        EVP_CIPHER_CTX_free(f->ctx);
        f->ctx = NULL;
        f->real->pMethods = NULL;
        return rc;
    }
    f->base.pMethods = &sealed_methods;
    return SQLITE_OK;
}

static int sealed_delete(sqlite3_vfs *vfs, const char *name, int sync) { (void)vfs; (void)name; (void)sync; return SQLITE_READONLY; }
static int sealed_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs; return underlying->xAccess(underlying, name, flags, out);
}
static int sealed_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs; return underlying->xFullPathname(underlying, name, size, out);
}
static int sealed_randomness(sqlite3_vfs *vfs, int size, char *out) { (void)vfs; return underlying->xRandomness(underlying, size, out); }
static int sealed_sleep(sqlite3_vfs *vfs, int micros) { (void)vfs; return underlying->xSleep(underlying, micros); }
static int sealed_current_time(sqlite3_vfs *vfs, double *out) { (void)vfs; return underlying->xCurrentTime(underlying, out); }
static int sealed_last_error(sqlite3_vfs *vfs, int size, char *out) { (void)vfs; return underlying->xGetLastError(underlying, size, out); }

static void register_once(void) {
    underlying = sqlite3_vfs_find(NULL);
    if (underlying == NULL || RAND_bytes(sealed_key, (int)sizeof(sealed_key)) != 1) { registered = 1; return; }
    memset(&sealed_vfs, 0, sizeof(sealed_vfs));
    sealed_vfs.iVersion = 1;
    sealed_vfs.szOsFile = (int)sizeof(sealed_file) + underlying->szOsFile;
    sealed_vfs.mxPathname = underlying->mxPathname;
    sealed_vfs.zName = HREADER_SEALED_VFS;
    sealed_vfs.xOpen = sealed_open;
    sealed_vfs.xDelete = sealed_delete;
    sealed_vfs.xAccess = sealed_access;
    sealed_vfs.xFullPathname = sealed_full_pathname;
    sealed_vfs.xRandomness = sealed_randomness;
    sealed_vfs.xSleep = sealed_sleep;
    sealed_vfs.xCurrentTime = sealed_current_time;
    sealed_vfs.xGetLastError = sealed_last_error;
    registered = sqlite3_vfs_register(&sealed_vfs, 0) == SQLITE_OK ? 0 : 1;
}

int hreader_sealed_register(void) {
    pthread_once(&once, register_once);
    return registered;
}

// MARK: Writing

struct hreader_sealed_writer {
    int fd;
    EVP_CIPHER_CTX *ctx;
    sqlite3_int64 offset;
    unsigned char buffer[64 * 1024];
};

hreader_sealed_writer *hreader_sealed_writer_new(int fd) {
    if (hreader_sealed_register() != 0) return NULL;
    hreader_sealed_writer *w = calloc(1, sizeof(*w));
    if (w == NULL) return NULL;
    w->fd = fd;
    w->ctx = new_context();
    if (w->ctx == NULL) { free(w); return NULL; }
    return w;
}

int hreader_sealed_write(hreader_sealed_writer *w, const uint8_t *bytes, size_t count) {
    while (count > 0) {
        int n = count < sizeof(w->buffer) ? (int)count : (int)sizeof(w->buffer);
        memcpy(w->buffer, bytes, (size_t)n);
        if (crypt_at(w->ctx, w->buffer, n, w->offset) != 0) return EIO;
        for (int done = 0; done < n;) {
            ssize_t wrote = write(w->fd, w->buffer + done, (size_t)(n - done));
            if (wrote < 0) {
                if (errno == EINTR) continue;
                return errno;
            }
            done += (int)wrote;
        }
        w->offset += n;
        bytes += n;
        count -= (size_t)n;
    }
    return 0;
}

void hreader_sealed_writer_free(hreader_sealed_writer *w) {
    if (w == NULL) return;
    EVP_CIPHER_CTX_free(w->ctx);
    OPENSSL_cleanse(w->buffer, sizeof(w->buffer));
    free(w);
}
