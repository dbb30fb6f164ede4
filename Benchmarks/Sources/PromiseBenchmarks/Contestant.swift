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
