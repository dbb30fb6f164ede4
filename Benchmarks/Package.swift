// swift-tools-version:6.0
import Foundation
import PackageDescription

// A "before" contestant, when Benchmarks/scripts/baseline.sh has put PromiseCore and Cancellable of an earlier ref in
// Baseline/ (ignored by git): built as modules of their own and timed in the same run as the current ones.
let hasBaseline = FileManager.default.fileExists(atPath: Context.packageDirectory + "/Baseline/BaselinePromiseCore")
let baselineTargets: [Target] =
    hasBaseline
    ? [
        .target(name: "BaselinePromiseCore", path: "Baseline/BaselinePromiseCore"),
        .target(
            name: "BaselineCancellable",
            dependencies: ["BaselinePromiseCore"],
            path: "Baseline/BaselineCancellable"
        ),
    ] : []

// Benchmarks live in their own package so that the library stays dependency-free.
// Run: swift run -c release --package-path Benchmarks promise-benchmarks
let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "promise-benchmarks", targets: ["PromiseBenchmarks"]),
        .executable(name: "allocation-budgets", targets: ["AllocationBudgets"]),
        .executable(name: "testing-scenarios", targets: ["TestingScenarios"]),
        .executable(name: "download-benchmark", targets: ["DownloadBenchmark"]),
        .executable(name: "line-rate", targets: ["LineRate"]),
        .executable(name: "download-client", targets: ["DownloadClient"]),
    ],
    dependencies: [
        .package(name: "PromiseCore", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", from: "0.14.0"),
        // The example's throttled mirrors, for the download benchmark.
        .package(name: "Examples", path: "../Examples"),
    ],
    targets: [
        .executableTarget(
            name: "PromiseBenchmarks",
            dependencies: [
                .product(name: "PromiseCore", package: "PromiseCore"),
                .product(name: "Cancellable", package: "PromiseCore"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ] + (hasBaseline ? ["BaselinePromiseCore", "BaselineCancellable"] : []),
            swiftSettings: hasBaseline ? [.define("BASELINE")] : []
        ),
        // Heap allocations per hot operation, against budgets that `.ci/run` enforces.
        .executableTarget(
            name: "AllocationBudgets",
            dependencies: [
                "MallocCounter",
                .product(name: "PromiseCore", package: "PromiseCore"),
                .product(name: "Cancellable", package: "PromiseCore"),
            ]
        ),
        .target(name: "MallocCounter"),
        // How long tests written with PromiseTesting take, next to the floor of any stubbed transfer test.
        .executableTarget(
            name: "TestingScenarios",
            dependencies: [
                .product(name: "PromiseCore", package: "PromiseCore"),
                .product(name: "Cancellable", package: "PromiseCore"),
                .product(name: "CancellableURLSession", package: "PromiseCore"),
                .product(name: "PromiseTesting", package: "PromiseCore"),
            ]
        ),
        // Race, segmented download and aria2c against the same local throttled mirrors.
        .executableTarget(
            name: "DownloadBenchmark",
            dependencies: [
                .product(name: "MirrorServer", package: "Examples"),
                .product(name: "PromiseCore", package: "PromiseCore"),
                .product(name: "Cancellable", package: "PromiseCore"),
                .product(name: "CancellableURLSession", package: "PromiseCore"),
            ]
        ),
        // The download module at line rate from a local nginx, next to curl, aria2c and a bare URLSession download
        // task, each a process of its own started by `line-rate`. Depending on the client builds it with the
        // harness, which runs the binary beside its own.
        .executableTarget(name: "LineRate", dependencies: ["DownloadClient"]),
        .executableTarget(
            name: "DownloadClient",
            dependencies: [.product(name: "CancellableURLSession", package: "PromiseCore")]
        ),
    ] + baselineTargets,
    swiftLanguageModes: [.v6]
)
