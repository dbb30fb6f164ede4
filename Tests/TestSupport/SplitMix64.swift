/// A small, fast, seedable generator (Steele, Lea & Flood's SplitMix64), so a failing seed replays exactly: the
/// model-based tests' and the randomized schedule tests'.
package struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) {
        state = seed
    }

    package mutating func nextRaw() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The next value, for `Int.random(in:using:)` and the standard library's other random APIs.
    package mutating func next() -> UInt64 {
        nextRaw()
    }

    package mutating func next(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(nextRaw() % UInt64(range.count))
    }

    package mutating func shuffle<T>(_ array: inout [T]) {
        guard array.count > 1 else { return }
        for index in stride(from: array.count - 1, to: 0, by: -1) {
            array.swapAt(index, next(in: 0...index))
        }
    }
}
