// swift-tools-version: 6.1
import PackageDescription

/// One settings array for every Swift target (Swift 6 mode plus the upcoming features we hold ourselves to).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "photoprep",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "PhotoPrep", targets: ["PhotoPrep"]),
        .executable(name: "photoprep", targets: ["photoprep"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev", "zlib1g-dev"])]),
        .target(
            name: "PhotoPrep",
            dependencies: ["CTurboJPEG", "CPNG"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "photoprep",
            dependencies: [
                "PhotoPrep",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PhotoPrepTests",
            dependencies: ["PhotoPrep", "CTurboJPEG"],
            resources: [],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
