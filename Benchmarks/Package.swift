// swift-tools-version:6.0
import PackageDescription

// Benchmarks live in their own package so that the library stays dependency-free.
// Run: swift run -c release --package-path Benchmarks promise-benchmarks
let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "promise-benchmarks", targets: ["PromiseBenchmarks"]),
        .executable(name: "allocation-budgets", targets: ["AllocationBudgets"]),
        .executable(name: "testing-scenarios", targets: ["TestingScenarios"]),
    ],
    dependencies: [
        .package(name: "PromiseCore", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", from: "0.14.0"),
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
            ]
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
    ],
    swiftLanguageModes: [.v6]
)
