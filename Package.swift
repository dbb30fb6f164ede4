// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "PromiseCore",
    // The oldest systems Swift Concurrency runs on (back-deployed): the library uses `Task` and `async` throughout.
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6), .visionOS(.v1)],
    products: [
        .library(name: "PromiseCore", targets: ["PromiseCore"]),
        .library(name: "Cancellable", targets: ["Cancellable"]),
        .library(name: "CancellableURLSession", targets: ["CancellableURLSession"]),
        // For test targets only: virtual time for every timer, the leak check, stubbed URLSession transfers.
        .library(name: "PromiseTesting", targets: ["PromiseTesting"]),
    ],
    targets: [
        .target(name: "PromiseCore", swiftSettings: swiftSettings),
        .target(name: "Cancellable", dependencies: ["PromiseCore"], swiftSettings: swiftSettings),
        // URLSession methods returning CancellablePromises (Foundation/FoundationNetworking only).
        .target(
            name: "CancellableURLSession",
            dependencies: ["Cancellable", "PromiseCore"],
            swiftSettings: swiftSettings
        ),
        // Imports Testing and XCTest where they exist (canImport): never link it into an app.
        .target(name: "PromiseTesting", dependencies: ["PromiseCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PromiseTestingTests",
            dependencies: ["PromiseTesting", "PromiseCore", "Cancellable", "CancellableURLSession", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        // Helpers shared by the test targets: errors, counters, a start gate, log capture, time limits where
        // swift-testing has them, whether ThreadSanitizer is on.
        .target(
            name: "TestSupport",
            dependencies: ["PromiseCore"],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PromiseCoreTests",
            dependencies: ["PromiseCore", "PromiseTesting", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        // A real HTTP server on 127.0.0.1 (POSIX sockets) that records what each connection did.
        .target(
            name: "LoopbackHTTPServer",
            dependencies: ["PromiseTesting"],
            path: "Tests/LoopbackHTTPServer",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CancellableURLSessionTests",
            dependencies: [
                "CancellableURLSession", "Cancellable", "PromiseCore", "PromiseTesting", "LoopbackHTTPServer",
                "TestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        // The code of every DocC article, extracted by scripts/extract-snippets.py: compiled, so it cannot rot; the
        // testing article's tests run, and the Swift 6 apps article's view model runs on PromiseTesting's stubs and
        // once against the loopback server.
        .testTarget(
            name: "DocumentationTests",
            dependencies: [
                "PromiseCore", "Cancellable", "CancellableURLSession", "PromiseTesting", "LoopbackHTTPServer",
            ],
            swiftSettings: swiftSettings
        ),
        // Resolving, cancelling and releasing long chains and then-loops, each in a child process (Guarantees, rule 9);
        // .ci/run runs it in debug and release builds.
        .executableTarget(
            name: "stack-safety",
            dependencies: ["PromiseCore", "Cancellable"],
            path: "Tests/StackSafety",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CancellableTests",
            dependencies: ["Cancellable", "PromiseCore", "PromiseTesting", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        // PromiseKit- and CancellablePromiseKit-era client code, compiled in Swift 5 language mode: proves
        // that changing the imports is the whole migration.
        // A segmented download killed with SIGKILL mid-way and resumed from its last checkpoint, each kill in a
        // child process; .ci/run runs it.
        .executableTarget(
            name: "crash-recovery",
            dependencies: ["CancellableURLSession", "Cancellable", "PromiseCore", "LoopbackHTTPServer"],
            path: "Tests/CrashRecovery",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PromiseKitCompatibilityTests",
            dependencies: ["PromiseCore", "Cancellable", "CancellableURLSession"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
