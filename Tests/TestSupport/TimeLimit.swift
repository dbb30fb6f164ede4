package import Testing

/// `.timeLimit(.minutes(minutes))` on the systems where swift-testing has it (macOS 13, iOS 16, tvOS 16, watchOS 9
/// and later; every other platform); no limit before those versions, where the test still runs.
///
/// The package deploys to macOS 10.15 and iOS 13, below `TimeLimitTrait`'s availability, so its tests take their
/// limit from here rather than each carrying an `#available` check:
///
/// ```swift
/// @Test(timeLimit(minutes: 1)) func resumes() async throws { … }
/// @Suite(.serialized, timeLimit(minutes: 5)) struct Scenarios { … }
/// ```
package func timeLimit(minutes: Int) -> any TestTrait & SuiteTrait {
    if #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) {
        return .timeLimit(.minutes(minutes))
    }
    return NoTimeLimit(minutes: minutes)
}

/// What ``timeLimit(minutes:)`` gives where swift-testing cannot enforce a time limit: a comment saying so, in the
/// test's details.
private struct NoTimeLimit: TestTrait, SuiteTrait {
    let minutes: Int

    var comments: [Comment] {
        [
            Comment(
                rawValue: "Would be limited to \(minutes) min: swift-testing enforces time limits from macOS 13, "
                    + "iOS 16, tvOS 16, watchOS 9"
            )
        ]
    }
}
