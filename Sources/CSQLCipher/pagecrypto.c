// hreader's SQLCipher crypto provider (include/PageCrypto.h): SQLCipher's own OpenSSL provider with its
// page HMAC and page cipher replaced by ones that keep their OpenSSL contexts per connection.
// SQLCipher and OpenSSL are reached through the lazy loaders' wrappers; the SQLCipher functions that
// are not in its public header are looked up in the loaded library and checked for NULL.
#include "CSQLCipher.h"
#include "COpenSSL.h"
#include "PageCrypto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// SQLCipher 4.5.0 to 4.6.1's `sqlcipher_provider` (src/sqlcipher.h), identical in every release of
// those two lines; 4.7 changed it (init/shutdown, a list), so other versions keep SQLCipher's own.
typedef struct {
    int (*activate)(void *ctx);
    int (*deactivate)(void *ctx);
    const char *(*get_provider_name)(void *ctx);
    int (*add_random)(void *ctx, void *buffer, int length);
    int (*random)(void *ctx, void *buffer, int length);
    int (*hmac)(void *ctx, int algorithm, unsigned char *hmac_key, int key_sz, unsigned char *in, int in_sz,
                unsigned char *in2, int in2_sz, unsigned char *out);
    int (*kdf)(void *ctx, int algorithm, const unsigned char *pass, int pass_sz, unsigned char *salt, int salt_sz,
               int workfactor, int key_sz, unsigned char *key);
    int (*cipher)(void *ctx, int mode, unsigned char *key, int key_sz, unsigned char *iv, unsigned char *in, int in_sz,
                  unsigned char *out);
    const char *(*get_cipher)(void *ctx);
    int (*get_key_sz)(void *ctx);
    int (*get_iv_sz)(void *ctx);
    int (*get_block_sz)(void *ctx);
    int (*get_hmac_sz)(void *ctx, int algorithm);
    int (*ctx_init)(void **ctx);
    int (*ctx_free)(void **ctx);
    int (*fips_status)(void *ctx);
    const char *(*get_provider_version)(void *ctx);
} provider46;

// SQLCipher's own functions, from the library (not in its public header).
static struct {
    int (*register_provider)(provider46 *);
    provider46 *(*get_provider)(void);
    int (*openssl_setup)(provider46 *);
    void *(*malloc)(sqlite3_uint64);
    char *(*version)(void);
} sqlcipher;

// SQLCipher's OpenSSL provider as it sets itself up: what the kept functions fall back to.
static provider46 original;
// OpenSSL's HMAC and AES-256-CBC, fetched once for the process.
static EVP_MAC *hmac_method;
static EVP_CIPHER *aes_cbc;
// 1 when the library and OpenSSL passed the checks below, else 0.
static int usable;
static pthread_once_t prepared = PTHREAD_ONCE_INIT;
static hreader_page_crypto_mode chosen = hreader_page_crypto_kept;

enum { max_key = 64 };

// One connection's contexts (SQLCipher keeps a provider context per keyed database).
typedef struct {
    EVP_MAC_CTX *mac;
    int mac_algorithm, mac_key_size;   // mac_key_size -1: the context is not keyed
    unsigned char mac_key[max_key];
    EVP_CIPHER_CTX *cipher[2];         // [mode]: SQLCipher's CIPHER_DECRYPT 0, CIPHER_ENCRYPT 1, as OpenSSL's `enc`
    int cipher_key_size[2];
    unsigned char cipher_key[2][max_key];
} kept_context;

static const char *digest_name(int algorithm) {
    switch (algorithm) {
    case 0: return "SHA1";     // SQLCIPHER_HMAC_SHA1
    case 1: return "SHA256";   // SQLCIPHER_HMAC_SHA256
    case 2: return "SHA512";   // SQLCIPHER_HMAC_SHA512
    default: return NULL;
    }
}

static int kept_ctx_init(void **ctx) {
    int rc = original.ctx_init(ctx);
    if (rc != SQLITE_OK) return rc;
    kept_context *kept = calloc(1, sizeof *kept);
    if (kept == NULL) {
        original.ctx_free(ctx);
        return SQLITE_NOMEM;
    }
    kept->mac_key_size = kept->cipher_key_size[0] = kept->cipher_key_size[1] = -1;
    *ctx = kept;
    return SQLITE_OK;
}

static int kept_ctx_free(void **ctx) {
    kept_context *kept = *ctx;
    if (kept != NULL) {
        EVP_MAC_CTX_free(kept->mac);
        EVP_CIPHER_CTX_free(kept->cipher[0]);
        EVP_CIPHER_CTX_free(kept->cipher[1]);
        OPENSSL_cleanse(kept, sizeof *kept);
        free(kept);
        *ctx = NULL;
    }
    return original.ctx_free(ctx);
}

// HMAC(key, in || in2): the context keyed once, reset with the same key for each page.
static int kept_hmac(void *ctx, int algorithm, unsigned char *key, int key_sz, unsigned char *in, int in_sz,
                     unsigned char *in2, int in2_sz, unsigned char *out) {
    kept_context *kept = ctx;
    const char *digest = digest_name(algorithm);
    if (kept == NULL || digest == NULL || in == NULL || key_sz < 0 || key_sz > max_key) {
        return original.hmac(ctx, algorithm, key, key_sz, in, in_sz, in2, in2_sz, out);
    }
    if (kept->mac != NULL && kept->mac_key_size == key_sz && kept->mac_algorithm == algorithm
        && CRYPTO_memcmp(kept->mac_key, key, (size_t)key_sz) == 0) {
        if (EVP_MAC_init(kept->mac, NULL, 0, NULL) != 1) goto fail;
    } else {
        if (kept->mac == NULL && (kept->mac = EVP_MAC_CTX_new(hmac_method)) == NULL) goto fail;
        kept->mac_key_size = -1;
        OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", (char *)digest, 0), OSSL_PARAM_construct_end()};
        if (EVP_MAC_init(kept->mac, key, (size_t)key_sz, params) != 1) goto fail;
        memcpy(kept->mac_key, key, (size_t)key_sz);
        kept->mac_key_size = key_sz;
        kept->mac_algorithm = algorithm;
    }
    if (EVP_MAC_update(kept->mac, in, (size_t)in_sz) != 1) goto fail;
    if (in2 != NULL && EVP_MAC_update(kept->mac, in2, (size_t)in2_sz) != 1) goto fail;
    size_t size = EVP_MAC_CTX_get_mac_size(kept->mac), written = 0;
    if (EVP_MAC_final(kept->mac, out, &written, size) != 1 || written != size) goto fail;
    return SQLITE_OK;
fail:
    kept->mac_key_size = -1;
    return SQLITE_ERROR;
}

// AES-256-CBC without padding: the key schedule made once per direction, the IV set for each page.
static int kept_cipher(void *ctx, int mode, unsigned char *key, int key_sz, unsigned char *iv, unsigned char *in, int in_sz,
                       unsigned char *out) {
    kept_context *kept = ctx;
    if (kept == NULL || (mode != 0 && mode != 1) || key_sz != 32 || in_sz < 0) {
        return original.cipher(ctx, mode, key, key_sz, iv, in, in_sz, out);
    }
    EVP_CIPHER_CTX **slot = &kept->cipher[mode];
    if (*slot != NULL && kept->cipher_key_size[mode] == key_sz && CRYPTO_memcmp(kept->cipher_key[mode], key, 32) == 0) {
        if (EVP_CipherInit_ex2(*slot, NULL, NULL, iv, mode, NULL) != 1) goto fail;
    } else {
        if (*slot == NULL && (*slot = EVP_CIPHER_CTX_new()) == NULL) goto fail;
        kept->cipher_key_size[mode] = -1;
        if (EVP_CipherInit_ex2(*slot, aes_cbc, key, iv, mode, NULL) != 1) goto fail;
        memcpy(kept->cipher_key[mode], key, 32);
        kept->cipher_key_size[mode] = key_sz;
    }
    if (EVP_CIPHER_CTX_set_padding(*slot, 0) != 1) goto fail;
    int written = 0, last = 0;
    if (EVP_CipherUpdate(*slot, out, &written, in, in_sz) != 1) goto fail;
    if (EVP_CipherFinal_ex(*slot, out + written, &last) != 1 || written + last != in_sz) goto fail;
    return SQLITE_OK;
fail:
    kept->cipher_key_size[mode] = -1;
    return SQLITE_ERROR;
}

// MARK: Checks before the provider is used

// The kept functions against known answers, each twice in a row (the second run is the reset path):
// RFC 4231's test case 2 for HMAC-SHA512, NIST SP 800-38A F.2.5/F.2.6 for AES-256-CBC.
static int self_test(void) {
    void *ctx = NULL;
    if (kept_ctx_init(&ctx) != SQLITE_OK) return 0;
    int ok = 1;
    unsigned char key[] = "Jefe", data[] = "what do ya want for nothing?", mac[64];
    static const unsigned char expected_mac[64] = {
        0x16, 0x4b, 0x7a, 0x7b, 0xfc, 0xf8, 0x19, 0xe2, 0xe3, 0x95, 0xfb, 0xe7, 0x3b, 0x56, 0xe0, 0xa3,
        0x87, 0xbd, 0x64, 0x22, 0x2e, 0x83, 0x1f, 0xd6, 0x10, 0x27, 0x0c, 0xd7, 0xea, 0x25, 0x05, 0x54,
        0x97, 0x58, 0xbf, 0x75, 0xc0, 0x5a, 0x99, 0x4a, 0x6d, 0x03, 0x4f, 0x65, 0xf8, 0xf0, 0xe6, 0xfd,
        0xca, 0xea, 0xb1, 0xa3, 0x4d, 0x4a, 0x6b, 0x4b, 0x63, 0x6e, 0x07, 0x0a, 0x38, 0xbc, 0xe7, 0x37};
    for (int round = 0; round < 2 && ok; round++) {
        memset(mac, 0, sizeof mac);
        // The message in two parts, as SQLCipher passes a page and its number.
        ok = kept_hmac(ctx, 2, key, 4, data, 20, data + 20, 8, mac) == SQLITE_OK && memcmp(mac, expected_mac, 64) == 0;
    }
    static const unsigned char aes_key[32] = {
        0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae, 0xf0, 0x85, 0x7d, 0x77, 0x81,
        0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61, 0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3, 0x09, 0x14, 0xdf, 0xf4};
    static const unsigned char aes_iv[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    static const unsigned char plain[32] = {
        0x6b, 0xc1, 0xbe, 0xe2, 0x2e, 0x40, 0x9f, 0x96, 0xe9, 0x3d, 0x7e, 0x11, 0x73, 0x93, 0x17, 0x2a,
        0xae, 0x2d, 0x8a, 0x57, 0x1e, 0x03, 0xac, 0x9c, 0x9e, 0xb7, 0x6f, 0xac, 0x45, 0xaf, 0x8e, 0x51};
    static const unsigned char sealed[32] = {
        0xf5, 0x8c, 0x4c, 0x04, 0xd6, 0xe5, 0xf1, 0xba, 0x77, 0x9e, 0xab, 0xfb, 0x5f, 0x7b, 0xfb, 0xd6,
        0x9c, 0xfc, 0x4e, 0x96, 0x7e, 0xdb, 0x80, 0x8d, 0x67, 0x9f, 0x77, 0x7b, 0xc6, 0x70, 0x2c, 0x7d};
    unsigned char buffer[32];
    for (int round = 0; round < 2 && ok; round++) {
        ok = kept_cipher(ctx, 1, (unsigned char *)aes_key, 32, (unsigned char *)aes_iv, (unsigned char *)plain, 32, buffer) == SQLITE_OK
             && memcmp(buffer, sealed, 32) == 0;
        ok = ok && kept_cipher(ctx, 0, (unsigned char *)aes_key, 32, (unsigned char *)aes_iv, (unsigned char *)sealed, 32, buffer) == SQLITE_OK
             && memcmp(buffer, plain, 32) == 0;
    }
    kept_ctx_free(&ctx);
    return ok;
}

// Whether this SQLCipher's provider structure is the one above: 4.5.x or 4.6.x.
static int known_version(void) {
    char *text = sqlcipher.version();
    if (text == NULL) return 0;
    int major = 0, minor = 0;
    int parsed = sscanf(text, "%d.%d", &major, &minor);
    sqlite3_free(text);
    return parsed == 2 && major == 4 && (minor == 5 || minor == 6);
}

// Registers `kept` or SQLCipher's own as the default provider. Only while SQLCipher is active (a keyed
// connection is open): when its last one closes, SQLCipher frees its mutexes and forgets the provider,
// and a provider registered then would meet freed mutexes. The keeper below stays open for that.
static int register_provider(int kept) {
    provider46 *current = sqlcipher.get_provider();
    if (current != NULL && (current->hmac == kept_hmac) == kept) return 1;
    // Registering frees the provider it replaces (sqlcipher_free), so it is allocated as SQLCipher does.
    provider46 *provider = sqlcipher.malloc(sizeof *provider);
    if (provider == NULL) return 0;
    *provider = original;
    if (kept) {
        provider->hmac = kept_hmac;
        provider->cipher = kept_cipher;
        provider->ctx_init = kept_ctx_init;
        provider->ctx_free = kept_ctx_free;
    }
    return sqlcipher.register_provider(provider) == SQLITE_OK;
}

// A keyed in-memory connection opened once and never closed: SQLCipher stays active for the life of
// the process, so the provider registered is kept and can be changed at any time.
static sqlite3 *keeper;

static int open_keeper(void) {
    unsigned char random[32];
    if (RAND_bytes(random, sizeof random) != 1) return 0;
    char literal[2 + 64 + 1 + 1];
    static const char digits[] = "0123456789abcdef";
    literal[0] = 'x';
    literal[1] = '\'';
    for (int i = 0; i < 32; i++) {
        literal[2 + 2 * i] = digits[random[i] >> 4];
        literal[3 + 2 * i] = digits[random[i] & 15];
    }
    literal[66] = '\'';
    literal[67] = 0;
    OPENSSL_cleanse(random, sizeof random);
    int ok = sqlite3_open_v2(":memory:", &keeper, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK
             && sqlite3_key(keeper, literal, 67) == SQLITE_OK && sqlcipher.get_provider() != NULL;
    OPENSSL_cleanse(literal, sizeof literal);
    if (!ok && keeper != NULL) {
        sqlite3_close_v2(keeper);
        keeper = NULL;
    }
    return ok;
}

static void prepare(void) {
    (void)hreader_sqlcipher_load();   // loads the library (and OpenSSL) if not yet
    void *handle = hreader_sqlcipher_library;
    if (handle == NULL) return;
    sqlcipher.register_provider = (int (*)(provider46 *))dlsym(handle, "sqlcipher_register_provider");
    sqlcipher.get_provider = (provider46 * (*)(void)) dlsym(handle, "sqlcipher_get_provider");
    sqlcipher.openssl_setup = (int (*)(provider46 *))dlsym(handle, "sqlcipher_openssl_setup");
    sqlcipher.malloc = (void *(*)(sqlite3_uint64))dlsym(handle, "sqlcipher_malloc");
    sqlcipher.version = (char *(*)(void))dlsym(handle, "sqlcipher_version");
    if (!sqlcipher.register_provider || !sqlcipher.get_provider || !sqlcipher.openssl_setup || !sqlcipher.malloc
        || !sqlcipher.version || !known_version()) {
        return;
    }
    memset(&original, 0, sizeof original);
    if (sqlcipher.openssl_setup(&original) != SQLITE_OK || !original.hmac || !original.cipher || !original.ctx_init
        || !original.ctx_free) {
        return;
    }
    hmac_method = EVP_MAC_fetch(NULL, "HMAC", NULL);
    aes_cbc = EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL);
    if (hmac_method == NULL || aes_cbc == NULL || !self_test()) return;
    usable = open_keeper();
}

void hreader_page_crypto_set_mode(hreader_page_crypto_mode mode) {
    __atomic_store_n(&chosen, mode, __ATOMIC_RELEASE);
}

int hreader_page_crypto_install(void) {
    pthread_once(&prepared, prepare);
    if (!usable) return 0;
    int kept = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE) == hreader_page_crypto_kept;
    // SQLCipher's provider mutex orders this against a connection copying the provider as it is keyed.
    return register_provider(kept) && kept;
}

int hreader_page_crypto_registered(void) {
    pthread_once(&prepared, prepare);
    return sqlcipher.get_provider != NULL && sqlcipher.get_provider() != NULL;
}
