public import Dispatch

/// Where the library's timers take their time from: `after`, `timeout(seconds:)` and `retry`'s delays all
/// schedule their work through a clock, and nothing in PromiseCore or Cancellable waits any other way.
///
/// Production code uses ``DispatchClock``, real time. Tests swap in a virtual clock — `TestClock` or
/// `ImmediateClock` from the `PromiseTesting` library — per call or for everything a task does:
///
/// ```swift
/// let clock = TestClock()
/// let reply = fetch().timeout(seconds: 30, clock: clock)    // per call
/// withPromiseClock(clock) { model.refresh() }                // or for code that does not take a clock
/// await clock.advance(by: .seconds(30))                     // the timeout fires now
/// ```
///
/// A clock of your own only has to run work no earlier than asked, once, unless its timer is cancelled first.
/// It works on every platform the package supports, unlike Swift's `Clock` (macOS 13, iOS 16).
public protocol PromiseClock: Sendable {
    /// Runs `work` once, no earlier than `delay` from now, on any thread, unless the returned timer is
    /// cancelled first.
    ///
    /// `work` must not run before this returns on the calling thread's stack unless the clock fires timers
    /// at once by design (an immediate clock): callers handle both.
    func schedule(after delay: DispatchTimeInterval, _ work: @escaping @Sendable () -> Void) -> PromiseTimer

    /// Seconds on this clock since a fixed moment — the clock's start for a virtual clock, the system's boot for
    /// real time: what measures an interval, as the difference of two readings (a download's speed, how long it has
    /// run). Never goes back.
    ///
    /// ```swift
    /// let start = clock.elapsed
    /// await clock.advance(by: .seconds(2))
    /// clock.elapsed - start   // 2
    /// ```
    ///
    /// A clock of your own that does not implement it reads real time (`DispatchTime.now()`).
    var elapsed: Double { get }
}

extension PromiseClock {
    /// Real time: seconds since the system's boot (`DispatchTime.now()`, monotonic).
    public var elapsed: Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1_000_000_000
    }
}

/// A piece of work scheduled on a ``PromiseClock``: cancel it to stop it from running.
///
/// ```swift
/// let timer = clock.schedule(after: .seconds(1)) { print("tick") }
/// timer.cancel()   // "tick" is never printed
/// ```
public struct PromiseTimer: Sendable {
    private let cancelWork: @Sendable () -> Void

    /// A timer whose ``cancel()`` calls `cancel`. The library may cancel a timer more than once, and after its
    /// work ran, so `cancel` must do nothing in both cases.
    public init(cancel: @escaping @Sendable () -> Void) {
        cancelWork = cancel
    }

    /// Stops the work if it has not run yet; does nothing otherwise. Safe to call from any thread, any
    /// number of times.
    public func cancel() {
        cancelWork()
    }
}

/// Real time: waits on Dispatch's monotonic clock and runs the work on a global queue. The default clock.
///
/// ```swift
/// let clock: any PromiseClock = DispatchClock()
/// after(seconds: 1, clock: clock).done { print("a second later") }
/// ```
public struct DispatchClock: PromiseClock {
    /// What watches this clock's timers: PromiseTesting's `withRealTimeForbidden`, if the clock was made inside it.
    /// Kept with the clock, so that a timer that work started there schedules later — a retry's back-off, from a
    /// queue — is watched too.
    private let observer: (@Sendable (DispatchTimeInterval) -> Void)?

    /// Real time.
    public init() {
        observer = PromiseClocks.realTimeObserver
    }

    public func schedule(after delay: DispatchTimeInterval, _ work: @escaping @Sendable () -> Void) -> PromiseTimer {
        if let observe = observer ?? PromiseClocks.realTimeObserver {
            observe(delay)
        }
        // DispatchWorkItem is thread-safe but not marked Sendable by swift-corelibs-libdispatch.
        let item = UncheckedSendable(DispatchWorkItem(block: work))
        DispatchQueue.global().asyncAfter(deadline: .now() + delay, execute: item.value)
        return PromiseTimer { item.value.cancel() }
    }
}

extension PromiseClock where Self == DispatchClock {
    /// Real time: ``DispatchClock``.
    ///
    /// ```swift
    /// after(seconds: 1, clock: .dispatch)
    /// ```
    public static var dispatch: DispatchClock { DispatchClock() }
}

/// The clock that timers use when the call does not pass one.
///
/// ```swift
/// withPromiseClock(clock) {
///     _ = PromiseClocks.current   // clock
/// }
/// ```
public enum PromiseClocks {
    @TaskLocal package static var installed: (any PromiseClock)?

    /// Told of each real-time timer ``DispatchClock`` schedules while set: PromiseTesting's
    /// `withRealTimeForbidden` uses it to prove that code takes its time from an injected clock.
    @TaskLocal package static var realTimeObserver: (@Sendable (DispatchTimeInterval) -> Void)?

    /// The clock installed with ``withPromiseClock(_:operation:)`` for the current task (or, outside tasks, the
    /// current thread's synchronous scope); ``DispatchClock`` when none is.
    public static var current: any PromiseClock {
        installed ?? DispatchClock()
    }
}

/// Runs `operation` with `clock` as the clock of every timer it starts without being given one:
/// `after`, `timeout(seconds:)`, `retry` — called by `operation` itself or by anything it calls, synchronously.
///
/// ```swift
/// let clock = TestClock()
/// let model = withPromiseClock(clock) { SearchModel() }   // a model that keeps PromiseClocks.current
/// withPromiseClock(clock) { model.search("swift") }       // its debounce and timeout use `clock`
/// await clock.advance(by: .milliseconds(300))
/// ```
///
/// The clock is a task-local value: tests running in parallel each see their own. Code that starts a timer
/// later, from a handler running on a queue, does not see it; such code should keep the clock it was given or
/// found at initialisation (`init(clock: any PromiseClock = PromiseClocks.current)`) and pass it on.
/// A `retry` keeps the clock it started with for all its delays.
@discardableResult
public func withPromiseClock<R>(_ clock: any PromiseClock, operation: () throws -> R) rethrows -> R {
    try PromiseClocks.$installed.withValue(clock, operation: operation)
}

/// Runs the asynchronous `operation` with `clock` as the clock of every timer it starts without being given
/// one; see ``withPromiseClock(_:operation:)``.
///
/// ```swift
/// try await withPromiseClock(clock) {
///     try await model.refresh()
/// }
/// ```
@discardableResult
public func withPromiseClock<R>(
    _ clock: any PromiseClock,
    isolation: isolated (any Actor)? = #isolation,
    operation: () async throws -> R
) async rethrows -> R {
    try await PromiseClocks.$installed.withValue(clock, operation: operation, isolation: isolation)
}
