// swift-tools-version:6.1
import PackageDescription

// Layers (DESIGN.md §1, docs/architecture.md), each importing only what is below it:
//   hreader → HReaderWeb (serve) → HReaderKit → HReaderNet → HReaderRecords (pure mapping) → HReaderModel (the values)
//                                  HReaderKit → HReaderStore → HReaderModel; HReaderStore → CSQLCipher, HReaderCrypto → COpenSSL
// Records and Net never see Store, so the mapping and the network link no SQLite. HReaderModel and HReaderJSON
// (the one JSON value, parser and serializer) sit at the bottom and import nothing of hreader's.
// Nothing here may link the plain system libsqlite3 (it would shadow SQLCipher's symbols).
let package = Package(
    name: "hreader",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "hreader", targets: ["hreader"]),
        .library(name: "HReaderKit", targets: ["HReaderKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        // The local web view, without its default traits (configuration-file support and full Foundation), which hreader does not use.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // SQLCipher, OpenSSL's libcrypto, libxml2, libqrencode and zbar are not linked: each is dlopen-ed the first time hreader
        // calls one of its functions (C<Library>/loader.c), so a command that needs none of them starts
        // without loading them (docs/cli.md, "Start-up"). The System* targets only bring pkg-config's
        // include paths; the C* targets are the headers Swift imports and their loaders (.ci/gen-lazy-libraries.py).
        .systemLibrary(
            name: "SystemSQLCipher",
            path: "Sources/SystemLibraries/SQLCipher",
            pkgConfig: "sqlcipher",
            providers: [.apt(["libsqlcipher-dev"]), .brew(["sqlcipher"])]
        ),
        .systemLibrary(
            name: "SystemOpenSSL",
            path: "Sources/SystemLibraries/OpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .systemLibrary(
            name: "SystemLibXML2",
            path: "Sources/SystemLibraries/LibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        .systemLibrary(
            name: "SystemQREncode",
            path: "Sources/SystemLibraries/QREncode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"]), .brew(["qrencode"])]
        ),
        .systemLibrary(
            name: "SystemZbar",
            path: "Sources/SystemLibraries/Zbar",
            pkgConfig: "zbar",
            providers: [.apt(["libzbar-dev"]), .brew(["zbar"])]
        ),
        .target(name: "CDynamicLibrary"),
        .target(name: "CSQLCipher", dependencies: ["SystemSQLCipher", "CDynamicLibrary", "COpenSSL"]),
        .target(name: "COpenSSL", dependencies: ["SystemOpenSSL", "CDynamicLibrary"]),
        .target(name: "CLibXML2", dependencies: ["SystemLibXML2", "CDynamicLibrary"]),
        .target(name: "CQREncode", dependencies: ["SystemQREncode", "CDynamicLibrary"]),
        .target(name: "CZbar", dependencies: ["SystemZbar", "CDynamicLibrary"]),
        .systemLibrary(
            name: "CZlibChecksum",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // hreader's own small C shims, a header each (Sources/CShims/include):
        // - ProcessHardening.h: no core files, not dumpable, no register dumps on a crash: set first thing by the executable;
        // - SandboxedChild.h: starts a helper that parses untrusted bytes (pdftotext, pdftoppm, tesseract) with no network
        //   (an empty network namespace, else seccomp), resource limits, and no files written (HReaderKit's SandboxedChild);
        // - StandardOutput.h: C's stdout for the executable's print (Swift 6 will not read the C global itself).
        .target(name: "CShims"),
        .target(name: "HReaderJSON"),
        .target(name: "HReaderCrypto", dependencies: ["COpenSSL", "HReaderJSON"]),
        // The values every layer shares (patients, entries, samples, clinical times, HTML and text helpers): no SQLite.
        .target(name: "HReaderModel"),
        .target(name: "HReaderStore", dependencies: ["CSQLCipher", "HReaderModel", "HReaderCrypto", "HReaderJSON"]),
        // memmem, which Swift's Glibc module does not declare. Apart from CShims: it defines _GNU_SOURCE, and
        // glibc's types read under it (fd_set) differ from the same types in the modules Records also imports.
        .target(name: "CByteSearch"),
        .target(name: "HReaderRecords", dependencies: ["HReaderModel", "HReaderCrypto", "HReaderJSON", "CLibXML2", "CByteSearch", "CZlibChecksum"]),
        .target(
            name: "HReaderNet",
            dependencies: [
                "HReaderRecords",
                "HReaderModel",    // HTMLText for the login's answer to the browser
                "HReaderCrypto",   // PKCE: random verifiers and SHA-256
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(
            name: "HReaderKit",
            dependencies: ["HReaderNet", "HReaderRecords", "HReaderStore", "HReaderModel", "HReaderCrypto", "HReaderJSON", "CZlibChecksum", "CQREncode", "CZbar", "CShims",
                           .product(name: "ZIPFoundation", package: "ZIPFoundation")]
        ),
        // `hreader serve`: the local web view over HReaderKit. Its pages' script and style are embedded in the binary.
        .target(
            name: "HReaderWeb",
            dependencies: ["HReaderKit", "HReaderStore", "HReaderModel", "HReaderCrypto", "HReaderJSON", .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "HummingbirdCore", package: "hummingbird"),
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
            resources: [.embedInCode("Assets/app.js"), .embedInCode("Assets/app.css")]
        ),
        .executableTarget(
            name: "hreader",
            dependencies: ["HReaderWeb", "HReaderKit", "HReaderNet", "HReaderRecords", "HReaderStore", "HReaderModel", "HReaderCrypto", "HReaderJSON", "CShims",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // `make bench`: figures with ratios to baselines measured in the same run.
        // A FHIR R4 + RHEx + OAuth2 server over synthetic patients, on 127.0.0.1 only: for tests, demo, bench.
        // Independent of hreader's own modules, so it cannot share their bugs, but for the JSON core (one
        // parser and serializer to fuzz and to trust, not two; issue 15) and the loader of OpenSSL's libcrypto,
        // whose AES-GCM its own JWE code seals the SMART Health Links of --shl with.
        .executableTarget(
            name: "hreader-sample-server",
            dependencies: [
                "HReaderJSON",
                "COpenSSL",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // Writes synthetic Apple Health exports (export.xml or export.zip) in the real format, any size; and
        // a Garmin watch's FIT files and Android Health Connect exports (HReaderStore: its one SQLite).
        .executableTarget(
            name: "hreader-health-generator",
            dependencies: ["HReaderJSON", "HReaderStore", "FITWriter", .product(name: "ZIPFoundation", package: "ZIPFoundation")]
        ),
        .executableTarget(name: "hreader-bench", dependencies: ["HReaderKit", "HReaderNet", "HReaderRecords", "HReaderStore", "HReaderModel", "HReaderCrypto", "HReaderJSON",
                                                          "CLibXML2"]),
        // Fuzzing (docs/security.md, "Fuzzing"; make fuzz): libFuzzer harnesses over the parsers of untrusted
        // bytes. The checks (invariants) are libraries the tests replay Tests/*/Fuzz/ through; the harness
        // executables replay files in a plain build and fuzz in make fuzz's sanitizer build.
        .target(name: "CFuzzDriver", path: "Fuzz/CFuzzDriver"),
        .target(name: "FuzzDriver", dependencies: ["CFuzzDriver"], path: "Fuzz/Driver"),
        .target(name: "FuzzRecordsChecks", dependencies: ["FuzzDriver", "HReaderRecords", "HReaderModel", "HReaderStore", "HReaderCrypto", "HReaderJSON"], path: "Fuzz/Checks/Records"),
        .target(name: "FuzzKitChecks", dependencies: ["FuzzDriver", "HReaderKit", "HReaderRecords", "HReaderStore", "HReaderModel", "HReaderCrypto", "HReaderJSON"], path: "Fuzz/Checks/Kit"),
        .target(name: "FuzzWebChecks", dependencies: ["FuzzDriver", "HReaderWeb", "HReaderKit", "HReaderJSON",
                                                      .product(name: "Hummingbird", package: "hummingbird"),
                                                      .product(name: "HummingbirdCore", package: "hummingbird")], path: "Fuzz/Checks/Web"),
        .executableTarget(name: "fuzz-records", dependencies: ["FuzzDriver", "FuzzRecordsChecks"], path: "Fuzz/Harnesses/Records"),
        .executableTarget(name: "fuzz-kit", dependencies: ["FuzzDriver", "FuzzKitChecks"], path: "Fuzz/Harnesses/Kit"),
        .executableTarget(name: "fuzz-web", dependencies: ["FuzzDriver", "FuzzWebChecks"], path: "Fuzz/Harnesses/Web"),
        .testTarget(name: "HReaderJSONTests", dependencies: ["HReaderJSON"]),
        .testTarget(name: "HReaderCryptoTests", dependencies: ["HReaderCrypto"]),
        .testTarget(name: "HReaderModelTests", dependencies: ["HReaderModel"]),
        .testTarget(name: "HReaderStoreTests", dependencies: ["HReaderStore", "HReaderModel"]),
        .testTarget(name: "HReaderRecordsTests", dependencies: ["HReaderRecords", "HReaderModel", "HReaderJSON", "FuzzRecordsChecks", "FITWriter"], exclude: ["Fuzz", "Fixtures"]),
        // Starts the built executables (the sample server) for the integration tests; searches bytes (CByteSearch's memmem).
        .target(name: "TestSupport", dependencies: ["CByteSearch"], path: "Tests/TestSupport"),
        // Writes FIT files for the tests, the generator and the fuzz seeds (independent of the decoder).
        .target(name: "FITWriter", path: "Tests/FITWriter"),
        .testTarget(name: "HReaderNetTests", dependencies: ["HReaderNet", "HReaderJSON", "TestSupport"]),
        .testTarget(name: "HReaderCLITests", dependencies: ["HReaderKit", "HReaderNet", "HReaderJSON", "TestSupport", "FITWriter", "FuzzKitChecks", "FuzzWebChecks",
                                                      .product(name: "ZIPFoundation", package: "ZIPFoundation")],
                    exclude: ["Fuzz"]),
        // The executable's own pieces (its quick command-line path against swift-argument-parser).
        .testTarget(name: "HReaderCommandLineTests", dependencies: ["hreader", "HReaderJSON", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
    ],
    swiftLanguageModes: [.v6]
)
