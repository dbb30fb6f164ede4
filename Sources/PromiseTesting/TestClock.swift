public import Dispatch
public import Foundation
public import PromiseCore

/// A clock whose time moves only when the test says: `advance(by:)` fires exactly the timers that fall due, in
/// deadline order, on the calling thread, before it returns.
///
/// ```swift
/// @Test func theSearchTimesOut() {
///     let clock = TestClock()
///     let (work, _) = CancellablePromise<Int>.pending()
///     let reply = work.timeout(seconds: 30, clock: clock)
///     clock.advance(by: .seconds(29))
///     #expect(reply.isPending)
///     clock.advance(by: .seconds(1))
///     #expect(reply.error is TimeoutError)     // and `work` was cancelled
/// }
/// ```
///
/// Timers due at the same instant fire in the order they were scheduled. A timer that a firing one schedules
/// fires in the same `advance` if it falls due within it. Nothing runs between calls: handlers that the timers'
/// promises dispatch to a queue run there, as usual — in an `async` test, `await clock.advance(by:)` also lets
/// the main queue catch up after each timer (see `await advance(by:)`).
///
/// Pass it per call (`timeout(seconds:clock:)`, `after(seconds:clock:)`, `retry(_:delay:backoff:clock:…)`,
/// ``StubServer``'s pacing) or install it for the code under test with `withPromiseClock(_:operation:)`.
/// Thread-safe: timers may be scheduled and cancelled from any thread; advance it from one thread at a time.
///
/// A pending timer keeps its work — and what the work holds — until it fires or is cancelled, as a real timer does
/// until its deadline. Work that holds the clock (a `retry` waiting out a delay keeps the clock for its next one)
/// therefore keeps a clock the test dropped alive: finish what the test started (`run()`, or cancel it) before it
/// ends, as the `.noPromisesLeftPending` trait would also ask.
public final class TestClock: PromiseClock, Sendable {
    private struct Entry {
        let deadline: UInt64
        let sequence: UInt64
        /// A ``StubServer``'s timer, pacing a body: not one of the code under test's, which `waitForTimers` counts.
        let pacesStub: Bool
        let work: @Sendable () -> Void
    }

    private struct State {
        var now: UInt64 = 0
        var sequence: UInt64 = 0
        var entries: [Entry] = []
        /// Counts schedules and cancellations: `await advance` settles until it stops changing.
        var activity: UInt64 = 0

        /// The pending timers of the code under test: every one but a ``StubServer``'s pacing.
        var codeTimers: Int { entries.count { !$0.pacesStub } }
    }

    /// Waited on by `waitForTimers(count:)`.
    private let state = Watched(State())

    private func withState<R>(_ body: (inout State) -> R) -> R {
        state.update(body)
    }

    /// A clock at time zero with no timers.
    public init() {}

    /// An instant of this clock's virtual time: how far it is from the clock's start.
    ///
    /// ```swift
    /// let deadline = clock.now.advanced(by: .seconds(30))
    /// await clock.advance(to: deadline)
    /// ```
    public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
        /// Nanoseconds since the clock's start.
        let nanoseconds: UInt64

        /// The time from the clock's start to this instant.
        public var sinceStart: DispatchTimeInterval { .nanoseconds(Int(clamping: nanoseconds)) }

        /// This instant moved by `interval` (`.never`: past every finite instant); never before the clock's start.
        public func advanced(by interval: DispatchTimeInterval) -> Instant {
            Instant(nanoseconds: interval.nanosecondsOrNever.map { TestClock.add(nanoseconds, $0) } ?? .max - 1)
        }

        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

        /// `"3.5 s"` after the clock's start.
        public var description: String { "\(Double(nanoseconds) / 1_000_000_000) s" }
    }

    /// The current instant of virtual time: the clock's start until the test moves it.
    public var now: Instant {
        Instant(nanoseconds: state.read { $0.now })
    }

    /// ``now`` in seconds: `clock.elapsed == 3` after `advance(by: .seconds(3))`.
    public var elapsed: TimeInterval {
        TimeInterval(state.read { $0.now }) / 1_000_000_000
    }

    /// How many timers are scheduled and not yet fired or cancelled (a `.never` timer stays pending forever).
    public var pendingTimers: Int {
        state.read { $0.entries.count }
    }

    /// The delays, from ``now``, of the pending timers, soonest first: `[.seconds(2)]` while a retry waits two
    /// seconds. `.never` for timers that never fire.
    public var pendingDelays: [DispatchTimeInterval] {
        state.read { state in
            state.entries.sorted(by: Self.firesBefore).map { entry in
                entry.deadline == .max ? .never : .nanoseconds(Int(clamping: entry.deadline - state.now))
            }
        }
    }

    public func schedule(after delay: DispatchTimeInterval, _ work: @escaping @Sendable () -> Void) -> PromiseTimer {
        schedule(after: delay, pacingStub: false, work)
    }

    /// ``schedule(after:_:)`` for a ``StubServer`` pacing a body (`pacingStub`), whose timers
    /// `waitForTimers(count:)` does not count.
    func schedule(
        after delay: DispatchTimeInterval,
        pacingStub: Bool,
        _ work: @escaping @Sendable () -> Void
    ) -> PromiseTimer {
        let sequence = withState { state in
            state.sequence += 1
            state.activity += 1
            let deadline = delay.nanosecondsOrNever.map { Self.add(state.now, $0) } ?? .max
            let entry = Entry(deadline: deadline, sequence: state.sequence, pacesStub: pacingStub, work: work)
            state.entries.append(entry)
            return state.sequence
        }
        return PromiseTimer { [self] in
            withState { state in
                guard let index = state.entries.firstIndex(where: { $0.sequence == sequence }) else { return }
                state.entries.remove(at: index)
                state.activity += 1
            }
        }
    }

    /// Returns once at least `count` timers of the code under test are pending: the deterministic way to wait for
    /// code running on another thread — a retry whose attempt failed on a session's queue — to have started its
    /// timer. A ``StubServer``'s timers pacing a body on this clock are not counted (``pendingTimers`` counts them).
    ///
    /// ```swift
    /// let profile = loader.load()            // retry(3, delay: 1, backoff: 2) + timeout(seconds: 30)
    /// await clock.waitForTimers(count: 2)    // the first attempt failed: the timeout's and the back-off's
    /// await clock.advance(by: .seconds(1))   // the second attempt starts
    /// ```
    ///
    /// Timers that never come fail the test after `timeout` seconds of real time (60 by default), saying how many
    /// were pending; a cancelled task stops waiting at once.
    ///
    /// - Returns: whether the timers were pending (`false`: the test has failed, or was cancelled).
    @discardableResult
    public func waitForTimers(
        count: Int,
        timeout: TimeInterval = 60,
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) async -> Bool {
        await state.wait(
            until: { $0.codeTimers >= count },
            timeout: timeout,
            reportingAt: CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        ) { state in
            "TestClock waited \(timeout) s for \(count) pending timer\(count == 1 ? "" : "s") in vain; "
                + "\(state.codeTimers) \(state.codeTimers == 1 ? "is" : "are") pending"
        }
    }

    /// Moves time forward by `interval`, firing every timer that falls due, in deadline order, on this thread;
    /// each runs with ``now`` at its own deadline. Returns when time has reached `now + interval`.
    ///
    /// ```swift
    /// let delay = retry(3, delay: 1, backoff: 2, clock: clock, on: nil) { flakyFetch() }
    /// clock.advance(by: .seconds(1))   // the second attempt runs inside this call
    /// ```
    ///
    /// In an `async` function the compiler picks `await advance(by:)`, which also lets the main queue catch up:
    /// write `await clock.advance(by:)` there.
    public func advance(by interval: DispatchTimeInterval) {
        let target = deadline(after: interval)
        while let entry = takeFirst(dueBy: target) {
            entry.work()
        }
        reach(target)
    }

    /// `advance(by:)` by a number of seconds: `clock.advance(by: 0.25)`.
    public func advance(by seconds: TimeInterval) {
        advance(by: DispatchTimeInterval(clampingSeconds: seconds))
    }

    /// Moves time forward to `deadline` as `advance(by:)` does; an instant already past changes nothing.
    ///
    /// ```swift
    /// clock.advance(to: clock.now.advanced(by: .seconds(30)))
    /// ```
    public func advance(to deadline: Instant) {
        while let entry = takeFirst(dueBy: deadline.nanoseconds) {
            entry.work()
        }
        reach(deadline.nanoseconds)
    }

    /// Fires every timer that will ever fire, advancing time to each one's deadline, until none is left but
    /// `.never` ones. Stops after `limit` timers — a timer that always schedules another would otherwise run
    /// for ever — and reports a test failure naming the limit.
    public func run(
        limit: Int = 100_000,
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) {
        var fired = 0
        while let entry = takeFirst(dueBy: .max - 1) {
            fired += 1
            entry.work()
            if isRunaway(fired: fired, limit: limit) {
                return reportRunaway(
                    limit: limit,
                    at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
                )
            }
        }
    }

    /// Moves time forward by `interval` like the synchronous `advance(by:)`, but first
    /// and after each timer it fires, lets work queued on the main queue run: a handler, a retry's next attempt
    /// or a view model's state change that a timer's promise dispatches to the main queue has run — and has
    /// scheduled whatever timer it schedules — before the next timer is considered.
    ///
    /// ```swift
    /// let download = model.start()          // on the main actor; retries with back-off
    /// await clock.advance(by: .seconds(1))  // the second attempt has started on the main queue
    /// ```
    ///
    /// "Let the main queue run" means: wait for a block put on the main queue to run, and repeat until three
    /// turns in a row schedule or cancel no timer on this clock. Work on other queues is not waited for: wait for
    /// what it does (a ``StubServer`` request, a promise) instead.
    public func advance(by interval: DispatchTimeInterval, isolation: isolated (any Actor)? = #isolation) async {
        let target = deadline(after: interval)
        await settle()
        while let entry = takeFirst(dueBy: target) {
            entry.work()
            await settle()
        }
        reach(target)
    }

    /// `await advance(by:)` by a number of seconds.
    public func advance(by seconds: TimeInterval, isolation: isolated (any Actor)? = #isolation) async {
        await advance(by: DispatchTimeInterval(clampingSeconds: seconds))
    }

    /// Moves time forward to `deadline` as `await advance(by:)` does, letting the main queue catch up.
    ///
    /// ```swift
    /// await clock.advance(to: clock.now.advanced(by: .seconds(30)))
    /// ```
    public func advance(to deadline: Instant, isolation: isolated (any Actor)? = #isolation) async {
        await settle()
        while let entry = takeFirst(dueBy: deadline.nanoseconds) {
            entry.work()
            await settle()
        }
        reach(deadline.nanoseconds)
    }

    /// Fires every timer that will ever fire like ``run(limit:fileID:filePath:line:column:)``, letting the main queue
    /// catch up
    /// before and after each as `await advance(by:)` does.
    public func run(
        limit: Int = 100_000,
        isolation: isolated (any Actor)? = #isolation,
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) async {
        await settle()
        var fired = 0
        while let entry = takeFirst(dueBy: .max - 1) {
            fired += 1
            entry.work()
            await settle()
            if isRunaway(fired: fired, limit: limit) {
                return reportRunaway(
                    limit: limit,
                    at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
                )
            }
        }
    }

    /// The virtual instant `interval` from ``now`` (just short of `.never` for `.never`, so that `.never` timers
    /// stay pending).
    private func deadline(after interval: DispatchTimeInterval) -> UInt64 {
        state.read { state in interval.nanosecondsOrNever.map { Self.add(state.now, $0) } ?? .max - 1 }
    }

    /// Moves ``now`` to `target` once every timer due by it has fired.
    private func reach(_ target: UInt64) {
        withState { $0.now = max($0.now, target) }
    }

    /// Whether `run` has fired its `limit` of timers and more are pending.
    private func isRunaway(fired: Int, limit: Int) -> Bool {
        fired == limit && pendingTimers > 0
    }

    private func reportRunaway(limit: Int, at site: CallSite) {
        reportTestFailure(
            "TestClock.run() fired \(limit) timers and more keep coming; "
                + "a timer that always reschedules itself never drains",
            at: site
        )
    }

    /// Removes and returns the first timer due by `target`, moving ``now`` to its deadline.
    private func takeFirst(dueBy target: UInt64) -> Entry? {
        withState { state in
            guard let index = state.entries.indices.min(by: { Self.firesBefore(state.entries[$0], state.entries[$1]) }),
                state.entries[index].deadline <= target
            else { return nil }
            let entry = state.entries.remove(at: index)
            state.now = max(state.now, entry.deadline)
            return entry
        }
    }

    private func settle() async {
        var quietTurns = 0
        var seen = state.read { $0.activity }
        while quietTurns < 3 {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.main.async { continuation.resume() }
            }
            let activity = state.read { $0.activity }
            quietTurns = activity == seen ? quietTurns + 1 : 0
            seen = activity
        }
    }

    private static func firesBefore(_ a: Entry, _ b: Entry) -> Bool {
        (a.deadline, a.sequence) < (b.deadline, b.sequence)
    }

    fileprivate static func add(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow || sum == .max ? .max - 1 : sum
    }

}

// MARK: - Swift's Clock

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension TestClock.Instant: InstantProtocol {
    @_disfavoredOverload
    public func advanced(by duration: Duration) -> TestClock.Instant {
        advanced(by: DispatchTimeInterval(duration))
    }

    public func duration(to other: TestClock.Instant) -> Duration {
        other.nanoseconds >= nanoseconds
            ? .nanoseconds(Int64(clamping: other.nanoseconds - nanoseconds))
            : .nanoseconds(-Int64(clamping: nanoseconds - other.nanoseconds))
    }
}

/// `TestClock` is a Swift `Clock` (from macOS 13 and iOS 16), so code written against `any Clock<Duration>` tests
/// with it as swift-clocks' `TestClock` does: `sleep(until:)` waits for the test to move the clock, and counts as a
/// pending timer.
///
/// ```swift
/// let sleeper = Task { try await clock.sleep(for: .seconds(5)) }
/// await clock.waitForTimers(count: 1)
/// await clock.advance(by: .seconds(5))      // the sleep returns
/// ```
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension TestClock: Clock {
    public typealias Duration = Swift.Duration

    /// One nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Returns once the test has moved the clock to `deadline` (at once if it is there already); throws
    /// `CancellationError`, and stops its timer, if the task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        guard deadline > now else { return }
        let sleep = Sleep()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                let timer = schedule(after: now.duration(to: deadline).dispatchInterval) { sleep.end(nil) }
                sleep.start(continuation, timer: timer)
            }
        } onCancel: {
            sleep.end(CancellationError())
        }
    }

    /// `advance(by:)` by a `Duration` (`.seconds(1)` alone means a `DispatchTimeInterval`, as everywhere in the
    /// library; pass a `Duration` value, or `Duration.seconds(1)`).
    @_disfavoredOverload
    public func advance(by duration: Duration) {
        advance(by: DispatchTimeInterval(duration))
    }

    /// `await advance(by:)` by a `Duration`.
    @_disfavoredOverload
    public func advance(by duration: Duration, isolation: isolated (any Actor)? = #isolation) async {
        await advance(by: DispatchTimeInterval(duration))
    }
}

/// One `sleep(until:)`: ended once, by its timer or by cancellation, whichever comes first.
private final class Sleep: Sendable {
    private let state = Locked<(continuation: CheckedContinuation<Void, Error>?, timer: PromiseTimer?, ended: Error??)>(
        (nil, nil, nil)
    )

    func start(_ continuation: CheckedContinuation<Void, Error>, timer: PromiseTimer) {
        let ended = state.withLock { state -> Error?? in
            guard state.ended == nil else { return state.ended }
            state.continuation = continuation
            state.timer = timer
            return nil
        }
        if let ended {
            timer.cancel()
            if let error = ended { continuation.resume(throwing: error) } else { continuation.resume() }
        }
    }

    func end(_ error: Error?) {
        let taken = state.withLock { state -> (CheckedContinuation<Void, Error>?, PromiseTimer?)? in
            guard state.ended == nil else { return nil }
            state.ended = .some(error)
            defer {
                state.continuation = nil
                state.timer = nil
            }
            return (state.continuation, state.timer)
        }
        guard let (continuation, timer) = taken else { return }
        if error != nil { timer?.cancel() }
        guard let continuation else { return }
        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension DispatchTimeInterval {
    /// `duration` in nanoseconds, saturating; a negative one is zero.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else {
            self = .nanoseconds(0)
            return
        }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let total = overflow ? Int64.max : whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
        self = .nanoseconds(Int(clamping: total))
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Duration {
    /// This duration as a `DispatchTimeInterval`.
    fileprivate var dispatchInterval: DispatchTimeInterval { DispatchTimeInterval(self) }
}

/// A clock that fires every timer at once, on the thread that schedules it, and counts the time it skipped.
///
/// ```swift
/// let clock = ImmediateClock()
/// let value = try await retry(3, delay: 1, backoff: 2, clock: clock) { flakyFetch() }.async()
/// #expect(clock.elapsed == 3)   // waited 1 s and 2 s, in no time
/// ```
///
/// For code whose waiting is not what the test is about. A `.never` timer never fires.
public final class ImmediateClock: PromiseClock, Sendable {
    /// The total of the delays skipped, in nanoseconds.
    private let skipped = Locked<UInt64>(0)

    /// A clock at time zero.
    public init() {}

    /// The total of every delay this clock skipped.
    public var now: DispatchTimeInterval {
        .nanoseconds(Int(clamping: skipped.withLock { $0 }))
    }

    /// ``now`` in seconds.
    public var elapsed: TimeInterval {
        TimeInterval(skipped.withLock { $0 }) / 1_000_000_000
    }

    public func schedule(after delay: DispatchTimeInterval, _ work: @escaping @Sendable () -> Void) -> PromiseTimer {
        guard let delay = delay.nanosecondsOrNever else { return PromiseTimer {} }
        skipped.withLock { skipped in
            let (sum, overflow) = skipped.addingReportingOverflow(delay)
            skipped = overflow ? .max : sum
        }
        work()
        return PromiseTimer {}
    }
}

extension DispatchTimeInterval {
    /// The interval in nanoseconds (negative counts as zero, too large saturates), or `nil` for `.never`.
    var nanosecondsOrNever: UInt64? {
        func scaled(_ value: Int, by factor: Int) -> UInt64 {
            let (product, overflow) = value.multipliedReportingOverflow(by: factor)
            return overflow ? (value < 0 ? 0 : UInt64(Int.max)) : UInt64(max(0, product))
        }
        switch self {
        case .seconds(let seconds): return scaled(seconds, by: 1_000_000_000)
        case .milliseconds(let milliseconds): return scaled(milliseconds, by: 1_000_000)
        case .microseconds(let microseconds): return scaled(microseconds, by: 1_000)
        case .nanoseconds(let nanoseconds): return scaled(nanoseconds, by: 1)
        case .never: return nil
        @unknown default: return nil
        }
    }
}
