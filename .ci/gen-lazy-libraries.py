#!/usr/bin/env python3
"""Writes the headers through which hreader calls SQLCipher, OpenSSL and libxml2 (docs/cli.md, "Start-up").

The binary does not link those libraries: each is dlopen-ed the first time one of its functions is
called, so a command that needs none of them (`--version`, `--help`, completions) does not pay for
loading them, and a command that reads no XML does not load libxml2 and ICU. Swift calls the
functions by their own names; each name is a `static inline` wrapper that calls through a table the
loader (Sources/C<Library>/loader.c, also written here) fills with dlsym the first time. The library's
own declarations are renamed (`hreader_lib_<name>`) so that the wrappers can take the names without
clashing.

Run it after adding a function to a list below (it needs clang and the libraries' development
headers); the generated files are committed. `--check` (run by `make test`) says whether they are
this script's output for its lists. Parameter types are written as `__typeof__(T)`, so
that any declarator (function pointers included) needs no parsing here.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LIBRARIES = [
    {
        "target": "CSQLCipher",
        "prefix": "sqlcipher",
        "what": "SQLCipher",
        "hint": "install SQLCipher 4.5 or newer (Debian: libsqlcipher1)",
        # The soname of a normal install first (deb.sh names its package in Depends), then other systems'
        # names; on macOS the dylib and Homebrew's paths.
        "sonames": ["libsqlcipher.so.1", "libsqlcipher.so.0", "libsqlcipher.so"],
        "apple": ["libsqlcipher.0.dylib", "/opt/homebrew/opt/sqlcipher/lib/libsqlcipher.0.dylib",
                  "/usr/local/opt/sqlcipher/lib/libsqlcipher.0.dylib"],
        "loader_includes": ["COpenSSL.h"],
        "before": """    // hreader's OpenSSL first, so that it is initialised as COpenSSL's loader does it (SQLCipher
    // loads the same libcrypto).
    hreader_openssl();""",
        "after": "",
        # sqlcipher.pc does not define SQLITE_HAS_CODEC; without it sqlite3_key() is hidden. Spell the
        # directory: /usr/include/sqlite3.h is the plain SQLite header.
        "prelude": ["#define SQLITE_HAS_CODEC 1", "#define SQLITE_TEMP_STORE 2"],
        "includes": ["<sqlcipher/sqlite3.h>"],
        "pkg_config": "sqlcipher",
        "functions": """sqlite3_backup_finish sqlite3_backup_init sqlite3_backup_pagecount sqlite3_backup_remaining
            sqlite3_backup_step sqlite3_bind_blob sqlite3_bind_double sqlite3_bind_int64 sqlite3_bind_null
            sqlite3_bind_parameter_count sqlite3_bind_text sqlite3_bind_text64 sqlite3_busy_timeout sqlite3_changes
            sqlite3_clear_bindings sqlite3_close_v2 sqlite3_column_blob sqlite3_column_bytes sqlite3_column_count
            sqlite3_column_double sqlite3_column_int64 sqlite3_column_name sqlite3_column_text sqlite3_column_type
            sqlite3_compileoption_used sqlite3_db_cacheflush sqlite3_errcode sqlite3_errmsg sqlite3_exec sqlite3_extended_errcode
            sqlite3_extended_result_codes sqlite3_finalize sqlite3_free sqlite3_interrupt sqlite3_key sqlite3_last_insert_rowid
            sqlite3_libversion sqlite3_open_v2 sqlite3_prepare_v2 sqlite3_reset sqlite3_step
            sqlite3_deserialize sqlite3_limit sqlite3_malloc64 sqlite3_set_authorizer sqlite3_vfs_find sqlite3_vfs_register""",
        # Variadic: in the table for the shims below, not wrapped for Swift (which cannot call them).
        "variadic": ["sqlite3_config", "sqlite3_db_config"],
        "epilogue": """
// Memory statistics make every sqlite3_malloc take a global mutex; hreader reads none of them, and an
// import allocates millions of times.
static inline int hreader_sqlite3_disable_memory_statistics(void) {
    return hreader_sqlcipher()->sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

// The sealed scratch copy of a foreign database and its VFS (sealed.c).
#include "SealedScratch.h"

// SQLCipher's page HMAC and cipher through OpenSSL objects made once per connection (pagecrypto.c).
#include "PageCrypto.h"

// One of sqlite3_db_config's on/off settings (SQLITE_DBCONFIG_DEFENSIVE, …), for a foreign database
// opened read-only (Database.openForeign).
static inline int hreader_sqlite3_db_config_flag(sqlite3 *db, int op, int value) {
    return hreader_sqlcipher()->sqlite3_db_config(db, op, value, (int *)0);
}
""",
    },
    {
        "target": "COpenSSL",
        "prefix": "openssl",
        "what": "OpenSSL's libcrypto",
        "hint": "install OpenSSL 3 (Debian: libssl3)",
        "sonames": ["libcrypto.so.3", "libcrypto.so"],
        "apple": ["libcrypto.3.dylib", "/opt/homebrew/opt/openssl@3/lib/libcrypto.3.dylib",
                  "/usr/local/opt/openssl@3/lib/libcrypto.3.dylib"],
        "loader_includes": [],
        "before": "",
        "after": """    // Before anything else initialises OpenSSL (SQLCipher loads it too, and calls it later): no
    // OPENSSL_cleanup at exit, which freed every provider and table one by one, a fifth of a
    // millisecond of every command, for memory the process's end returns anyway.
    functions.OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_CONFIG, NULL);""",
        "prelude": [],
        "includes": ["<openssl/crypto.h>", "<openssl/err.h>", "<openssl/evp.h>", "<openssl/kdf.h>",
                     "<openssl/rand.h>", "<openssl/opensslv.h>", "<openssl/params.h>", "<openssl/core_names.h>", "<openssl/x509.h>", "<openssl/x509v3.h>"],
        "pkg_config": "libcrypto",
        "functions": """CRYPTO_memcmp ERR_clear_error EVP_CIPHER_CTX_ctrl EVP_CIPHER_CTX_free EVP_CIPHER_CTX_new EVP_DecryptFinal_ex
            EVP_DecryptInit_ex EVP_DecryptUpdate EVP_Digest EVP_DigestFinal_ex EVP_DigestInit_ex EVP_DigestSign
            EVP_DigestSignFinal EVP_DigestSignInit EVP_DigestSignUpdate EVP_DigestUpdate EVP_DigestVerify EVP_DigestVerifyInit EVP_EncryptFinal_ex
            EVP_EncryptInit_ex EVP_EncryptUpdate EVP_MD_CTX_free EVP_MD_CTX_new EVP_PBE_scrypt
            EVP_PKEY_CTX_add1_hkdf_info EVP_PKEY_CTX_free EVP_PKEY_CTX_new_id EVP_PKEY_CTX_set1_hkdf_key
            EVP_PKEY_CTX_set1_hkdf_salt EVP_PKEY_CTX_set_hkdf_md EVP_PKEY_derive EVP_PKEY_derive_init EVP_PKEY_free
            EVP_PKEY_new_raw_private_key EVP_aes_256_ctr EVP_aes_256_gcm EVP_sha1 EVP_sha256 OPENSSL_cleanse OPENSSL_init_crypto OpenSSL_version
            PKCS5_PBKDF2_HMAC RAND_bytes d2i_PUBKEY
            EVP_MAC_fetch EVP_MAC_CTX_new EVP_MAC_CTX_free EVP_MAC_CTX_get_mac_size EVP_MAC_init EVP_MAC_update EVP_MAC_final
            EVP_CIPHER_fetch EVP_CipherInit_ex2 EVP_CipherUpdate EVP_CipherFinal_ex EVP_CIPHER_CTX_set_padding
            OSSL_PARAM_construct_utf8_string OSSL_PARAM_construct_end
            ASN1_STRING_get0_data ASN1_STRING_length EVP_PKEY_eq GENERAL_NAMES_free OPENSSL_sk_free OPENSSL_sk_new_null
            OPENSSL_sk_num OPENSSL_sk_push OPENSSL_sk_value X509_STORE_CTX_free X509_STORE_CTX_get_error X509_STORE_CTX_init
            X509_STORE_CTX_new X509_STORE_CTX_set_time X509_STORE_add_cert X509_STORE_free X509_STORE_new X509_STORE_set_flags
            X509_free X509_get0_pubkey X509_get_ext_d2i X509_verify_cert X509_verify_cert_error_string d2i_X509""",
        "variadic": [],
        "epilogue": "",
    },
    {
        "target": "CLibXML2",
        "prefix": "libxml2",
        "what": "libxml2",
        "hint": "install libxml2 (Debian: libxml2)",
        "sonames": ["libxml2.so.2", "libxml2.so"],
        "apple": ["libxml2.2.dylib", "/usr/lib/libxml2.2.dylib"],
        "loader_includes": [],
        "before": "",
        "after": "",
        # Debian's libxml2 is built with ICU, and its encoding.h then includes the system's ICU headers,
        # which clash with the ICU module Foundation carries. hreader never touches the encoding handler
        # struct whose layout this changes; it uses the reader API through pointers only.
        "prelude": ["#include <libxml/xmlversion.h>", "#undef LIBXML_ICU_ENABLED"],
        "includes": ["<libxml/xmlreader.h>", "<libxml/hash.h>"],
        "pkg_config": "libxml-2.0",
        "functions": """xmlByteConsumed xmlCreatePushParserCtxt xmlCtxtUseOptions xmlFreeParserCtxt xmlFreeTextReader
            xmlGetLastError xmlGetLineNo xmlHashSize xmlInitParser xmlParseChunk xmlReaderForMemory xmlSetStructuredErrorFunc
            xmlStopParser xmlTextReaderConstLocalName xmlTextReaderConstName xmlTextReaderConstNamespaceUri
            xmlTextReaderConstValue xmlTextReaderCurrentNode xmlTextReaderDepth xmlTextReaderGetParserLineNumber
            xmlTextReaderHasAttributes xmlTextReaderIsEmptyElement xmlTextReaderIsNamespaceDecl
            xmlTextReaderMoveToElement xmlTextReaderMoveToNextAttribute xmlTextReaderNodeType xmlTextReaderRead""",
        "variadic": [],
        "epilogue": "",
    },
    {
        # Only `share create --qr` draws QR codes: most commands never load it.
        "target": "CQREncode",
        "prefix": "qrencode",
        "what": "libqrencode",
        "hint": "install libqrencode (Debian: libqrencode4) to draw QR codes",
        "sonames": ["libqrencode.so.4", "libqrencode.so"],
        "apple": ["libqrencode.4.dylib", "/opt/homebrew/opt/qrencode/lib/libqrencode.4.dylib",
                  "/usr/local/opt/qrencode/lib/libqrencode.4.dylib"],
        "loader_includes": [],
        "before": "",
        "after": "",
        "prelude": [],
        "includes": ["<qrencode.h>"],
        "pkg_config": "libqrencode",
        "functions": """QRcode_encodeString QRcode_free""",
        "variadic": [],
        "epilogue": "",
    },
    {
        # Reads QR codes only inside the sandboxed child (`hreader scan-qr-codes`, QRCodeScanner): the
        # process that holds the data key never loads it.
        "target": "CZbar",
        "prefix": "zbar",
        "what": "zbar",
        "hint": "install zbar (Debian: libzbar0) to read QR codes in pictures",
        "sonames": ["libzbar.so.0", "libzbar.so"],
        "apple": ["libzbar.0.dylib", "/opt/homebrew/opt/zbar/lib/libzbar.0.dylib", "/usr/local/opt/zbar/lib/libzbar.0.dylib"],
        "loader_includes": [],
        "before": "",
        "after": "",
        "prelude": [],
        "includes": ["<zbar.h>"],
        "pkg_config": "zbar",
        "functions": """zbar_image_create zbar_image_destroy zbar_image_first_symbol zbar_image_scanner_create
            zbar_image_scanner_destroy zbar_image_scanner_set_config zbar_image_set_data zbar_image_set_format
            zbar_image_set_size zbar_scan_image zbar_symbol_get_data zbar_symbol_get_data_length zbar_symbol_get_type
            zbar_symbol_next""",
        "variadic": [],
        "epilogue": "",
    },
]


def declarations(lib, names):
    """name -> (return type, [parameter types], variadic) from clang's AST of the library's headers."""
    cflags = subprocess.run(["pkg-config", "--cflags", lib["pkg_config"]], capture_output=True, text=True,
                            check=True).stdout.split()
    source = "\n".join(lib["prelude"] + [f"#include {h}" for h in lib["includes"]]) + "\n"
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
        f.write(source)
        path = f.name
    try:
        out = subprocess.run(["clang", "-fsyntax-only", *cflags, "-Xclang", "-ast-dump=json", path],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(path)
    found = {}
    for node in json.loads(out).get("inner", []):
        if node.get("kind") != "FunctionDecl" or node.get("name") not in names:
            continue
        qual = node["type"]["qualType"]
        params = [p["type"]["qualType"] for p in node.get("inner", []) if p.get("kind") == "ParmVarDecl"]
        returns = qual[:qual.index("(")].strip()
        found[node["name"]] = (returns, params, qual.rstrip().endswith("...)"))
    missing = [n for n in names if n not in found]
    if missing:
        sys.exit(f"{lib['target']}: not functions in the headers: {' '.join(missing)}")
    return found


def header(lib):
    names = lib["functions"].split()
    variadic = lib["variadic"]
    decls = declarations(lib, names + variadic)
    p = lib["prefix"]
    guard = f"HREADER_{lib['target'].upper()}_H"
    lines = [f"// Generated by .ci/gen-lazy-libraries.py: do not edit. {lib['what']}, loaded on first use",
             "// (loader.c); Swift calls these wrappers by the library's own names.",
             f"#ifndef {guard}", f"#define {guard}", ""]
    lines += lib["prelude"]
    lines += [f"#define {n} hreader_lib_{n}" for n in names + variadic]
    lines += [f"#include {h}" for h in lib["includes"]]
    lines += [f"#undef {n}" for n in names + variadic]
    lines += ["", f"/// Every function hreader calls, in the table's order (loader.c resolves them by these names).",
              f"#define HREADER_{p.upper()}_FUNCTIONS(X) \\"]
    lines += [f"    X({n}) \\" for n in names + variadic]
    lines += ["", f"struct hreader_{p}_functions {{"]
    lines += [f"    __typeof__(hreader_lib_{n}) *{n};" for n in names + variadic]
    lines += ["};", "",
              f"/// The table once the library is loaded, else NULL.",
              f"extern const struct hreader_{p}_functions *hreader_{p}_table;",
              f"/// Loads the library and fills the table (once); prints one line and exits if it cannot.",
              f"const struct hreader_{p}_functions *hreader_{p}_load(void);",
              f"/// The library's handle once loaded, else NULL: for symbols a version may lack (dlsym, NULL-checked).",
              f"extern void *hreader_{p}_library;", "",
              f"static inline const struct hreader_{p}_functions *hreader_{p}(void) {{",
              f"    const struct hreader_{p}_functions *table = __atomic_load_n(&hreader_{p}_table, __ATOMIC_ACQUIRE);",
              f"    return table ? table : hreader_{p}_load();",
              "}", ""]
    for n in names:
        returns, params, is_variadic = decls[n]
        assert not is_variadic, n
        formal = ", ".join(f"__typeof__({t}) a{i}" for i, t in enumerate(params)) or "void"
        actual = ", ".join(f"a{i}" for i in range(len(params)))
        call = f"hreader_{p}()->{n}({actual})"
        body = f"{call};" if returns == "void" else f"return {call};"
        lines.append(f"static inline {returns} {n}({formal}) {{ {body} }}")
    lines += [lib["epilogue"].rstrip(), "", f"#endif", ""]
    return "\n".join(lines)


def names_line(names):
    """The C array of names a loader tries, as loader.c spells it (check() looks for the same text)."""
    return "static const char *const names[] = { " + ", ".join(f'"{n}"' for n in names) + ", 0 };"


def loader(lib):
    p, t = lib["prefix"], lib["target"]
    includes = "".join(f'#include "{h}"\n' for h in lib["loader_includes"])
    before = lib["before"] + "\n" if lib["before"] else ""
    after = lib["after"] + "\n" if lib["after"] else ""
    return f"""// Generated by .ci/gen-lazy-libraries.py: do not edit. Loads {lib['what']} on first use and fills
// the table the wrappers in include/{t}.h call through.
#include "{t}.h"
#include "CDynamicLibrary.h"
{includes}
#include <pthread.h>

const struct hreader_{p}_functions *hreader_{p}_table;
void *hreader_{p}_library;
static struct hreader_{p}_functions functions;

static void load(void) {{
    // Each system's own names only. On Linux, bare sonames: the binary that ships has no run path
    // (deb-test), so the loader finds them only where the system keeps its libraries, never beside
    // the binary ($ORIGIN).
#if defined(__APPLE__)
    {names_line(lib["apple"])}
#else
    {names_line(lib["sonames"])}
#endif
    static const char what[] = "{lib['what']}", hint[] = "{lib['hint']}";
{before}    void *library = hreader_open_library(what, hint, names);
#define HREADER_RESOLVE(name) functions.name = (__typeof__(functions.name))hreader_library_symbol(library, what, hint, #name);
    HREADER_{p.upper()}_FUNCTIONS(HREADER_RESOLVE)
#undef HREADER_RESOLVE
{after}    hreader_{p}_library = library;
    __atomic_store_n(&hreader_{p}_table, &functions, __ATOMIC_RELEASE);
}}

const struct hreader_{p}_functions *hreader_{p}_load(void) {{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load);
    return hreader_{p}_table;
}}
"""


def check():
    """Whether the committed headers and loaders are this script's output for its lists (the functions
    and the sonames), without clang: `make test` runs it, so that a list edited without running the
    script fails at once. The declarations themselves come from the installed headers and are not compared."""
    problems = []
    for lib in LIBRARIES:
        directory = os.path.join(ROOT, "Sources", lib["target"])
        with open(os.path.join(directory, "include", lib["target"] + ".h")) as f:
            header_text = f.read()
        with open(os.path.join(directory, "loader.c")) as f:
            loader_text = f.read()
        macro = f"#define HREADER_{lib['prefix'].upper()}_FUNCTIONS(X) \\\n"
        listed = []
        if macro in header_text:
            for line in header_text.split(macro, 1)[1].splitlines():
                line = line.strip()
                if not (line.startswith("X(") and line.endswith(") \\")):
                    break
                listed.append(line[2:-3])
        wanted = lib["functions"].split() + lib["variadic"]
        if listed != wanted:
            problems.append(f"{lib['target']}: include/{lib['target']}.h lists other functions than the script "
                            f"(missing: {' '.join(sorted(set(wanted) - set(listed))) or '-'}; "
                            f"extra: {' '.join(sorted(set(listed) - set(wanted))) or '-'})")
        if names_line(lib["sonames"]) not in loader_text or names_line(lib["apple"]) not in loader_text:
            problems.append(f"{lib['target']}: loader.c names other libraries than the script")
    for problem in problems:
        print(f"gen-lazy-libraries: {problem}; run .ci/gen-lazy-libraries.py and commit its output", file=sys.stderr)
    return not problems


def main():
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if check() else 1)
    for lib in LIBRARIES:
        directory = os.path.join(ROOT, "Sources", lib["target"])
        os.makedirs(os.path.join(directory, "include"), exist_ok=True)
        for path, text in [(os.path.join(directory, "include", lib["target"] + ".h"), header(lib)),
                           (os.path.join(directory, "loader.c"), loader(lib))]:
            # Unchanged files keep their time stamps, so a build recompiles only what changed.
            if os.path.exists(path) and open(path).read() == text:
                continue
            with open(path, "w") as f:
                f.write(text)
            print(path)


if __name__ == "__main__":
    main()
