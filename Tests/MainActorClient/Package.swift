// swift-tools-version:6.2
import PackageDescription

// A client compiled as new Xcode app targets are: default MainActor isolation and the approachable-concurrency
// features. Its own package, so that the library keeps tools version 6.0. .ci/run runs it.
let package = Package(
    name: "MainActorClient",
    platforms: [.macOS(.v10_15)],
    dependencies: [.package(name: "PromiseCore", path: "../..")],
    targets: [
        .executableTarget(
            name: "MainActorClient",
            dependencies: [
                .product(name: "PromiseCore", package: "PromiseCore"),
                .product(name: "Cancellable", package: "PromiseCore"),
                .product(name: "CancellableURLSession", package: "PromiseCore"),
            ],
            swiftSettings: [
                .defaultIsolation(MainActor.self),
                .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
                .enableUpcomingFeature("InferIsolatedConformances"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
