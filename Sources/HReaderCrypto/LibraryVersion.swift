import COpenSSL

/// The OpenSSL hreader is linked with, for `hreader --version` and bug reports.
public enum OpenSSLLibrary {
    /// "OpenSSL 3.0.19 27 Jan 2026", as the library says it.
    public static var version: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }
}
