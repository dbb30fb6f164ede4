// swift-tools-version:6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "PromiseCore",
    products: [
        .library(name: "PromiseCore", targets: ["PromiseCore"]),
        .library(name: "Cancellable", targets: ["Cancellable"]),
    ],
    targets: [
        .target(name: "PromiseCore", swiftSettings: swiftSettings),
        .target(name: "Cancellable", dependencies: ["PromiseCore"], swiftSettings: swiftSettings),
        .testTarget(name: "PromiseCoreTests", dependencies: ["PromiseCore"], swiftSettings: swiftSettings),
        // PromiseKit-era client code, compiled in Swift 5 language mode: proves that changing
        // `import PromiseKit` to `import PromiseCore` is the whole migration.
        .testTarget(
            name: "PromiseKitCompatibilityTests",
            dependencies: ["PromiseCore"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
