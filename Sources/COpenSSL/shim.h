#ifndef HREADER_COPENSSL_SHIM_H
#define HREADER_COPENSSL_SHIM_H
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <openssl/opensslv.h>
#endif
