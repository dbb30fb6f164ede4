// swift-tools-version:6.0
import PackageDescription

// Examples live in their own package so that the library stays dependency-free.
let package = Package(
    name: "Examples",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "mirror-race", targets: ["MirrorRace"]),
        // The command-line recipe of "Using PromiseCore in Swift 6 apps", run by CI.
        .executable(name: "command-line-tool", targets: ["CommandLineTool"]),
        // The throttled mirrors, for the benchmark package's download benchmark too.
        .library(name: "MirrorServer", targets: ["MirrorServer"]),
    ],
    dependencies: [
        .package(name: "PromiseCore", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "MirrorRace",
            dependencies: [
                "MirrorServer",
                .product(name: "CancellableURLSession", package: "PromiseCore"),
                .product(name: "Cancellable", package: "PromiseCore"),
                .product(name: "PromiseCore", package: "PromiseCore"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "CommandLineTool",
            dependencies: [
                "MirrorServer",
                .product(name: "CancellableURLSession", package: "PromiseCore"),
                .product(name: "Cancellable", package: "PromiseCore"),
                .product(name: "PromiseCore", package: "PromiseCore"),
            ]
        ),
        .target(
            name: "MirrorServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
