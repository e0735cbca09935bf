// swift-tools-version: 6.1
import PackageDescription
import Foundation

/// The resampler's SIMD loops run 2–3.6× faster with AVX2 (measured on this project's 2-core
/// machines). Release builds use it when the building machine has it, like `-march=native`;
/// `PHOTOPREP_PORTABLE=1` builds for baseline x86-64 instead.
let hostHasAVX2: Bool = {
    #if arch(x86_64) && os(Linux)
    guard ProcessInfo.processInfo.environment["PHOTOPREP_PORTABLE"] == nil,
        let cpu = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
    else { return false }
    return cpu.contains(" avx2 ") && cpu.contains(" fma ")
    #else
    return false
    #endif
}()
let simdSettings: [SwiftSetting] =
    hostHasAVX2 ? [.unsafeFlags(["-target-cpu", "haswell"], .when(configuration: .release))] : []

/// The pipeline is compiled optimised in debug builds too: unoptimised, its pixel loops run about 100×
/// slower (3.1 s instead of 24 ms for a 2560×1600 photo here), and the tests and the debug server
/// prepare hundreds of photos. Everything else stays debuggable.
let optimisedInDebug: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

/// The functions `prepare` runs, then those the server runs taking photos in, laid out side by side at the start of the
/// code: the kernel maps a program's code 64 KiB around each page it touches, and spread over the 38 MB of code, the
/// prepare path made 10 MB of a `prepare`'s resident memory (4.8 MB gathered; docs/benchmarks.md). `Benchmarks/code-
/// layout.sh` writes the list from callgrind runs; a stale list costs memory, never correctness (the linker skips names
/// it does not find).
let codeLayout = [
    "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/photoprep/code-layout.order",
    "-Xlinker", "--no-warn-symbol-ordering",
]

/// The Swift runtime and Foundation linked into the executable (what `--static-swift-stdlib` does, which a plain
/// `swift build` or `swift run` does not pass): the modules were compiled against the shared Foundation, which
/// carries CoreFoundation and ICU inside, so the static archives those live in are named here.
let staticRuntime = [
    "-static-stdlib", "-lCoreFoundation", "-l_FoundationICU", "-l_FoundationCShims", "-l_FoundationCollections",
    "-lFoundationEssentials", "-lFoundationInternationalization",
    "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic",
] + codeLayout

/// `PHOTOPREP_TESTABLE=1` (scripts/test.sh sets it): this package's modules are compiled with testing enabled in
/// release builds too, so that the tests run on the same release build the speed regression guard counts — one build
/// for both, and dependencies compiled as usual. Without it, a release build is as users make it.
let testableInRelease: [SwiftSetting] =
    ProcessInfo.processInfo.environment["PHOTOPREP_TESTABLE"] == "1" ? [.unsafeFlags(["-enable-testing"], .when(configuration: .release))] : []

/// One settings array for every Swift target (Swift 6 mode plus the upcoming features we hold ourselves to).
/// Release builds put each function in a section of its own, so that the linker can gather the code `prepare` and the
/// server run (`codeLayout`).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release)),
] + testableInRelease

/// The tests' own code is compiled unoptimised in release builds too (what they drive is optimised): nothing in it is
/// hot, and it builds faster.
let testSettings: [SwiftSetting] = swiftSettings + [.unsafeFlags(["-Onone"], .when(configuration: .release))]

let package = Package(
    name: "photoprep",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "PhotoPrep", targets: ["PhotoPrep"]),
        .library(name: "PhotoUpload", targets: ["PhotoUpload"]),
        .library(name: "PhotoServices", targets: ["PhotoServices"]),
        .library(name: "PhotoServer", targets: ["PhotoServer"]),
        .executable(name: "photoprep", targets: ["photoprep"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/vapor/sql-kit", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit", from: "2.17.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev", "zlib1g-dev"])]),
        /// libheif (libheif-dev), loaded when the first HEIF or AVIF file is opened: see its header.
        .target(name: "CHeif"),
        /// libjpeg-turbo's libjpeg API (libjpeg62-turbo-dev), for decoding a JPEG row by row from its file.
        .target(name: "CJPEGStream", linkerSettings: [.linkedLibrary("jpeg")]),
        /// SSIMULACRA2's per-row loops, in C so that clang vectorises them (`MetricScale`); optimised in debug builds too,
        /// with AVX2 and FMA where release builds use them.
        .target(
            name: "CMetric",
            cSettings: [.unsafeFlags(["-O3"])] + (hostHasAVX2 ? [.unsafeFlags(["-mavx2", "-mfma"], .when(configuration: .release))] : []),
            linkerSettings: [.linkedLibrary("m")]),
        /// JPEGs written with libjpeg's API: optimised Huffman tables, progressive scans, 4:4:4 (`JPEGWriter`).
        .target(name: "CJPEGWrite", linkerSettings: [.linkedLibrary("jpeg")]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebpdemux", providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(name: "CLCMS2", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        /// glibc's malloc.h (malloc_trim), for the server's pipeline threads.
        .systemLibrary(name: "CMalloc"),
        .target(
            name: "PhotoPrep",
            dependencies: ["CTurboJPEG", "CJPEGStream", "CJPEGWrite", "CMetric", "CPNG", "CHeif", "CWebP", "CLCMS2", "CMalloc"],
            swiftSettings: swiftSettings + simdSettings + optimisedInDebug
        ),
        /// Files written atomically, paths, bounded concurrency: what the batch, the uploader, the services and the server share.
        .target(name: "PhotoFiles", swiftSettings: swiftSettings),
        .target(
            name: "PhotoUpload",
            dependencies: [
                "PhotoFiles",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PhotoServices",
            dependencies: [
                "PhotoPrep",
                "PhotoUpload",
                "PhotoFiles",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        /// `photoprep serve`: the tus server apps upload to, enforcing the storage rules and
        /// normalising every photo on arrival.
        .target(
            name: "PhotoServer",
            dependencies: [
                "PhotoPrep",
                "PhotoUpload",
                "PhotoFiles",
                "PhotoServices",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            resources: [.copy("API/openapi.yaml"), .copy("Web/Static")],
            swiftSettings: swiftSettings
        ),
        /// The batch command line: `prepare` (the batch runner, manifest, console), `probe`, `bench`.
        /// No network stack and only FoundationEssentials; uploading is behind the `BatchUpload` protocol.
        .target(
            name: "PhotoBatch",
            dependencies: [
                "PhotoPrep",
                "PhotoFiles",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        /// `photoprep`, every command: `prepare` (with `--upload`), `probe`, `bench`, `upload`, `presign`, the
        /// services, `serve`. Release builds link the Swift runtime and Foundation statically: a whole-process
        /// `prepare` of a small photo is mostly start-up, and the dynamic loader spent ~11 million instructions
        /// binding this binary's symbols to the shared Swift libraries.
        .executableTarget(
            name: "photoprep",
            dependencies: [
                "PhotoBatch",
                "PhotoFiles",
                "PhotoPrep",
                "PhotoUpload",
                "PhotoServices",
                "PhotoServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            exclude: ["code-layout.order"],
            swiftSettings: swiftSettings,
            linkerSettings: [.unsafeFlags(staticRuntime, .when(configuration: .release))]
        ),
        /// swift-nio-extras' own server of the IETF resumable-upload draft, for the interop tests.
        .executableTarget(
            name: "ResumableUploadTestServer",
            dependencies: [
                .product(name: "NIOResumableUpload", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/ResumableUploadTestServer",
            swiftSettings: testSettings
        ),
        /// What the test targets share: the servers they start on 127.0.0.1 (and their Python
        /// scripts in Support/), the built binary, test data.
        .target(
            name: "TestSupport",
            dependencies: [
                "PhotoServices", "CTurboJPEG",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/TestSupport",
            exclude: ["Support"],
            swiftSettings: testSettings
        ),
        /// The tests start the built `photoprep` (built with them: a build with tests builds every product). None depends
        /// on its module: the executable's release link settings (the static runtime) would reach the test bundle.
        .testTarget(
            name: "PhotoPrepTests",
            dependencies: [
                "PhotoPrep", "PhotoBatch", "TestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "PhotoUploadTests",
            dependencies: [
                "PhotoUpload", "PhotoFiles", "ResumableUploadTestServer", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "PhotoServicesTests",
            dependencies: [
                "PhotoServices", "PhotoUpload", "PhotoPrep", "TestSupport",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "PhotoServerTests",
            dependencies: [
                "PhotoServer", "PhotoServices", "PhotoPrep", "PhotoUpload", "TestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: testSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
