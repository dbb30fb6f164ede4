import Dispatch

/// One contestant behind the adapter every workload uses. Each method runs one workload once and returns
/// its cost in nanoseconds per unit (per promise, per link, per element), or `nil` where the contestant has
/// no such operation.
protocol Contestant {
    var name: String { get }
    /// How handlers run, so that readers compare like with like.
    var mode: String { get }
    /// One handler: the contestant's primitive callback (`pipe(to:)`, `whenSuccess`), no promise made for it.
    func createFulfilHandler(_ count: Int) -> Double?
    /// One chain step: `map`, which makes a second promise for the handler's outcome.
    func createFulfilMap(_ count: Int) -> Double?
    func chain(_ links: Int) -> Double?
    func when(_ count: Int) -> Double?
    func race(_ count: Int) -> Double?
    func raceAutoCancel(_ count: Int) -> Double?
    func anySome(_ count: Int) -> Double?
    func crossThread(_ count: Int) -> Double?
    /// Bytes of heap per pending promise with one handler, with `count` of them alive.
    func bytesPerPendingPromise(_ count: Int) -> Double?
    /// Bytes of heap per pending promise with one `map` step attached (two promises), `count` of them alive.
    func bytesPerPendingMap(_ count: Int) -> Double?
    /// Builds and resolves a chain of `links` links (run in a child process: it may crash).
    func deepChain(_ links: Int)
    /// create + `map` + `done`, handlers inline.
    func createMapDone(_ count: Int) -> Double?
    /// `count` pending promises, each with `map` + `done` inline, fulfilled from another thread.
    func crossThreadMapDone(_ count: Int) -> Double?

    // Cancellation (contestants that can cancel).
    /// Create cancellable work with a cancel handler, attach one `map` and an observer that sees errors,
    /// cancel the mapped promise: the cancellation travels up to the work; the handler ran, the observer saw it.
    func cancelOne(_ count: Int) -> Double?
    /// A head with a cancel handler and `links` `map` links; cancel the tail. Per link.
    func cancelChain(_ links: Int) -> Double?
    /// `count` inputs, each with a cancel handler, raced with auto-cancel; one fulfills. Timed (inputs included)
    /// until every loser's handler has run. Per input.
    func raceCancel(_ count: Int) -> Double?
    /// `count` inputs, each with a cancel handler, shared by two races with auto-cancel; one input fulfills. A
    /// loser is cancelled once both races have cancelled it. Timed (inputs included) until every loser's handler
    /// has run. Per input.
    func raceCancelShared(_ count: Int) -> Double?
    /// Bytes per pending cancellable promise with one `map` (two promises), `count` of them alive.
    func bytesPerPendingCancellableMap(_ count: Int) -> Double?
}

extension Contestant {
    func raceAutoCancel(_ count: Int) -> Double? { nil }
    func anySome(_ count: Int) -> Double? { nil }
    func crossThread(_ count: Int) -> Double? { nil }
    func bytesPerPendingPromise(_ count: Int) -> Double? { nil }
    func createFulfilMap(_ count: Int) -> Double? { nil }
    func bytesPerPendingMap(_ count: Int) -> Double? { nil }
    func chain(_ links: Int) -> Double? { nil }
    func deepChain(_ links: Int) {}
    func createMapDone(_ count: Int) -> Double? { nil }
    func crossThreadMapDone(_ count: Int) -> Double? { nil }
    func cancelOne(_ count: Int) -> Double? { nil }
    func cancelChain(_ links: Int) -> Double? { nil }
    func raceCancel(_ count: Int) -> Double? { nil }
    func raceCancelShared(_ count: Int) -> Double? { nil }
    func bytesPerPendingCancellableMap(_ count: Int) -> Double? { nil }
}

/// Nanoseconds per unit spent in `body`.
@inline(never)
func measure(units: Int, _ body: () -> Void) -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    body()
    let end = DispatchTime.now().uptimeNanoseconds
    return Double(end - start) / Double(units)
}

/// Keeps the optimizer from discarding a result.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
