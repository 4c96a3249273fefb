// SQLCipher checks and decrypts every page it reads (HMAC-SHA512, AES-256-CBC) through its crypto
// provider. SQLCipher 4.5/4.6's OpenSSL provider fetches the HMAC and the cipher by name from
// OpenSSL 3's store on every page (a lookup under the store's lock) and sets up the HMAC key and the
// AES key schedule again each time. hreader registers a provider that is SQLCipher's own in all but
// two functions: the page HMAC and the page cipher keep, per connection, OpenSSL contexts keyed once
// and only reset per page. The bytes on disk are the same (the same algorithms, keys and IVs).
// Installed only for SQLCipher versions whose provider structure hreader knows (4.5.x and 4.6.x);
// with any other version SQLCipher's own provider stays.
#ifndef HREADER_PAGE_CRYPTO_H
#define HREADER_PAGE_CRYPTO_H

/// Which provider connections keyed from now on use.
typedef enum {
    /// hreader's (the default, where the SQLCipher version allows it).
    hreader_page_crypto_kept = 0,
    /// SQLCipher's own OpenSSL provider (tests and the benchmark compare the two).
    hreader_page_crypto_sqlcipher = 1,
} hreader_page_crypto_mode;

/// Chooses the provider for connections keyed after it (the process's setting; the default is kept).
/// Changing it replaces SQLCipher's registered provider: do it while no other thread keys a connection
/// (tests and the benchmark; hreader itself never changes it).
void hreader_page_crypto_set_mode(hreader_page_crypto_mode mode);

/// Makes sure the chosen provider is SQLCipher's default before a connection is keyed (sqlite3_key or
/// ATTACH … KEY). The first call also keys an in-memory connection that stays open: SQLCipher frees
/// its registered provider and its mutexes when its last keyed connection closes, and registering a
/// provider then would use freed mutexes. Returns 1 when hreader's provider is in place, 0 when
/// SQLCipher's own is (chosen, or an unknown SQLCipher version).
int hreader_page_crypto_install(void);

/// Whether SQLCipher has a registered provider now (it drops it when its last keyed connection
/// closes): 1 at any time after the first install, thanks to the connection that stays open.
int hreader_page_crypto_registered(void);

#endif
