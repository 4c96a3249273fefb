// swift-tools-version:6.0
import PackageDescription

// Layers (DESIGN.md §1), each importing only what is below it:
//   hreader → HReaderKit → HReaderRecords (pure mapping) → HReaderStore → HReaderCrypto → CSQLCipher / COpenSSL
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
    ],
    targets: [
        .systemLibrary(
            name: "CSQLCipher",
            pkgConfig: "sqlcipher",
            providers: [.apt(["libsqlcipher-dev"]), .brew(["sqlcipher"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .target(name: "HReaderCrypto", dependencies: ["COpenSSL"]),
        .target(name: "HReaderStore", dependencies: ["CSQLCipher", "HReaderCrypto"]),
        .target(name: "HReaderRecords", dependencies: ["HReaderStore"]),
        .target(name: "HReaderKit", dependencies: ["HReaderRecords", "HReaderStore", "HReaderCrypto"]),
        .executableTarget(
            name: "hreader",
            dependencies: ["HReaderKit", "HReaderStore", "HReaderCrypto", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // `make bench`: figures with ratios to baselines measured in the same run.
        .executableTarget(name: "hreader-bench", dependencies: ["HReaderKit", "HReaderStore", "HReaderCrypto"]),
        .testTarget(name: "HReaderCryptoTests", dependencies: ["HReaderCrypto"]),
        .testTarget(name: "HReaderStoreTests", dependencies: ["HReaderStore"]),
        .testTarget(name: "HReaderRecordsTests", dependencies: ["HReaderRecords"]),
        .testTarget(name: "HReaderCLITests", dependencies: ["HReaderKit"]),
    ],
    swiftLanguageModes: [.v6]
)
