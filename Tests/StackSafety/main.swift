// Stack safety of every path — resolving, cancelling, releasing — on long chains and long `then` loops
// (Guarantees, rule 9). Each scenario runs in a child process of this program, so a stack overflow is a reported
// failure, not a dead test run.
//
//     swift run stack-safety                    # every scenario: 1M on an 8 MiB main thread, 100k on 512 KiB
//     swift run -c release stack-safety         # the same in a release build
//     stack-safety --child SCENARIO COUNT STACK # one scenario (internal; STACK is `main` or a size in KiB)
//
// The last line is "N passed, N failed"; the exit status is non-zero if any scenario failed.

import Cancellable
import Foundation
import PromiseCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A scenario builds something of `count` links or rounds, then resolves, cancels or drops it, and checks
/// the outcome; it returns a failure message, or nil.
struct Scenario: Sendable {
    let name: String
    let run: @Sendable (_ count: Int) -> String?
}

/// A counter that cancel handlers and deinits bump: one thread only, but handlers are `@Sendable`-free closures.
final class Counter: @unchecked Sendable {
    var value = 0
}

/// Something whose deinit is counted: captured by the last link, so its release proves the chain was freed.
final class Sentinel {
    let counter: Counter
    init(_ counter: Counter) { self.counter = counter }
    deinit { counter.value += 1 }
}

/// Whether everything `build` made is freed once it is dropped: a handler on the promise `build` returns holds
/// a `Sentinel`, whose release is counted.
func isReleased<Watched: Thenable>(_ build: () -> Watched) -> Bool {
    let released = Counter()
    do {
        let watched = build()
        let sentinel = Sentinel(released)
        watched.pipe { _ in withExtendedLifetime(sentinel) {} }
    }
    return released.value == 1
}

/// A `then` loop: round i waits for its work, then its body returns round i+1's promise. The driver fulfills
/// each round's work in turn (no recursion while building), leaving the last round pending. The bodies hold the
/// loop `unowned` (it holds the current round's resolver): dropping the loop drops the last round's work.
/// `@unchecked Sendable`: the bodies run `on: nil`, on the one thread that drives the loop.
final class Loop: @unchecked Sendable {
    var resolvers: Resolver<Void>?
    var cancelledRounds = Counter()

    func cancellableRound(_ index: Int, of count: Int) -> CancellablePromise<Int> {
        let cancelled = cancelledRounds
        let work = CancellablePromise<Void> { resolver in
            self.resolvers = resolver
            return { cancelled.value += 1 }
        }
        return work.then(on: nil) { [unowned self] _ -> CancellablePromise<Int> in
            index + 1 < count ? self.cancellableRound(index + 1, of: count) : .value(index)
        }
    }

    func plainRound(_ index: Int, of count: Int) -> Promise<Int> {
        let (work, resolver) = Promise<Void>.pending()
        resolvers = resolver
        return work.then(on: nil) { [unowned self] _ -> Promise<Int> in
            index + 1 < count ? self.plainRound(index + 1, of: count) : .value(index)
        }
    }

    /// Fulfills the current round's work `rounds` times.
    func advance(_ rounds: Int) {
        for _ in 0..<rounds {
            resolvers?.fulfill(())
        }
    }
}

let scenarios: [Scenario] = [
    Scenario(name: "resolve a plain chain") { count in
        let (head, resolver) = Promise<Int>.pending()
        var tail = head
        for _ in 0..<count { tail = tail.map(on: nil) { $0 + 1 } }
        resolver.fulfill(0)
        return tail.value == count ? nil : "tail is \(String(describing: tail.result))"
    },
    Scenario(name: "resolve a cancellable chain") { count in
        let (head, resolver) = CancellablePromise<Int>.pending()
        var tail = head
        for _ in 0..<count { tail = tail.map(on: nil) { $0 + 1 } }
        resolver.fulfill(0)
        return tail.value == count ? nil : "tail is \(String(describing: tail.result))"
    },
    Scenario(name: "cancel the tail of a cancellable chain") { count in
        let cancelled = Counter()
        let head = CancellablePromise<Int> { _ in { cancelled.value += 1 } }
        var tail = head
        for _ in 0..<count { tail = tail.map(on: nil) { $0 + 1 } }
        let didCancel = tail.cancel()
        guard didCancel, tail.isRejected, tail.isCancelled else { return "the tail was not cancelled" }
        guard head.isRejected, head.isCancelled else { return "the head was not cancelled" }
        return cancelled.value == 1 ? nil : "the cancel handler ran \(cancelled.value) times"
    },
    Scenario(name: "cancel a then-loop") { count in
        let loop = Loop()
        let outer = loop.cancellableRound(0, of: count + 1)
        loop.advance(count)
        guard outer.isPending else { return "the loop ended early" }
        outer.cancel()
        guard outer.isCancelled else { return "the loop was not cancelled" }
        // Rounds 0..<count had resolved; the one in flight is the only one whose cancel handler runs.
        return loop.cancelledRounds.value == 1 ? nil : "\(loop.cancelledRounds.value) rounds saw the cancel"
    },
    Scenario(name: "resolve a then-loop") { count in
        let loop = Loop()
        let outer = loop.cancellableRound(0, of: count)
        loop.advance(count)
        return outer.value == count - 1 ? nil : "the loop's result is \(String(describing: outer.result))"
    },
    Scenario(name: "drop a pending plain chain") { count in
        conf.logHandler = { _ in }  // the dropped resolver logs pendingPromiseDeallocated
        weak var weakHead: Promise<Int>?
        let released = isReleased {
            let (head, _) = Promise<Int>.pending()
            weakHead = head
            var tail = head
            for _ in 0..<count { tail = tail.map(on: nil) { $0 + 1 } }
            return tail
        }
        return released && weakHead == nil ? nil : "the chain was not freed"
    },
    Scenario(name: "drop a pending cancellable chain") { count in
        weak var weakHead: CancellablePromise<Int>?
        let released = isReleased {
            let head = CancellablePromise<Int> { _ in {} }
            weakHead = head
            var tail = head
            for _ in 0..<count { tail = tail.map(on: nil) { $0 + 1 } }
            return tail
        }
        return released && weakHead == nil ? nil : "the chain was not freed"
    },
    // Many short chains released together (one array of them): nested releases while the release loop is
    // already running. A release build once corrupted the loop's own list here (the benchmark's memory probe).
    Scenario(name: "drop many pending cancellable promises at once") { count in
        let released = isReleased {
            var pending: [(CancellablePromise<Void>, Resolver<Int>)] = []
            pending.reserveCapacity(count)
            for _ in 0..<count {
                let (promise, resolver) = CancellablePromise<Int>.pending()
                pending.append((promise.map(on: nil) { _ in }, resolver))
            }
            return pending[0].0
        }
        return released ? nil : "the promises were not freed"
    },
    Scenario(name: "drop a pending plain then-loop") { count in
        conf.logHandler = { _ in }
        let released = isReleased {
            let loop = Loop()
            let outer = loop.plainRound(0, of: count + 1)
            loop.advance(count)
            return outer
        }
        return released ? nil : "the loop was not freed"
    },
    Scenario(name: "drop a pending cancellable then-loop") { count in
        let released = isReleased {
            let loop = Loop()
            let outer = loop.cancellableRound(0, of: count + 1)
            loop.advance(count)
            return outer
        }
        return released ? nil : "the loop was not freed"
    },
]

let arguments = CommandLine.arguments

if arguments.count == 5, arguments[1] == "--child" {
    guard let scenario = scenarios.first(where: { $0.name == arguments[2] }), let count = Int(arguments[3]) else {
        FileHandle.standardError.write(Data("unknown scenario \(arguments[2])\n".utf8))
        exit(2)
    }
    let failure: String?
    if arguments[4] == "main" {
        failure = scenario.run(count)
    } else {
        // A secondary thread with an explicit stack size (Darwin gives its background threads 512 KiB).
        final class Outcome: @unchecked Sendable { var failure: String? }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            outcome.failure = scenario.run(count)
            done.signal()
        }
        thread.stackSize = Int(arguments[4])! * 1024
        thread.start()
        done.wait()
        failure = outcome.failure
    }
    if let failure {
        print(failure)
        exit(1)
    }
    exit(0)
}

// The driver: every scenario twice — 1M on the main thread with an 8 MiB stack, 100k on a 512 KiB thread. It starts
// child processes: on macOS and Linux only (iOS, tvOS, watchOS and visionOS have no `Process`).
#if os(macOS) || os(Linux)
#if canImport(Glibc)
let stackResource = Int32(RLIMIT_STACK.rawValue)  // an enum case in Glibc, an Int32 macro elsewhere
#else
let stackResource = RLIMIT_STACK
#endif
var limit = rlimit()
getrlimit(stackResource, &limit)
limit.rlim_cur = 8 << 20  // children inherit it: their main thread gets exactly 8 MiB, whatever the shell set
guard setrlimit(stackResource, &limit) == 0 else {
    print("cannot set the stack limit to 8 MiB")
    exit(2)
}

let configurations: [(count: Int, stack: String, label: String)] = [
    (1_000_000, "main", "1M, 8 MiB main thread"),
    (100_000, "512", "100k, 512 KiB thread"),
]
let onlyScenario = arguments.count == 3 && arguments[1] == "--only" ? arguments[2] : nil
var passed = 0
var failed = 0
for configuration in configurations {
    for scenario in scenarios where onlyScenario == nil || scenario.name == onlyScenario {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        if !FileManager.default.fileExists(atPath: "/proc/self/exe") {
            process.executableURL = Bundle.main.executableURL
        }
        process.arguments = ["--child", scenario.name, String(configuration.count), configuration.stack]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice  // a crash's backtrace: the signal is what matters
        process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        let start = Date()
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let seconds = String(format: "%.1f s", Date().timeIntervalSince(start))
        let name = "\(scenario.name) (\(configuration.label))"
        if process.terminationReason == .exit && process.terminationStatus == 0 {
            passed += 1
            print("ok      \(name) — \(seconds)")
        } else {
            failed += 1
            let how =
                process.terminationReason == .uncaughtSignal
                ? "killed by signal \(process.terminationStatus) (SIGSEGV, 11: a stack overflow or a memory error)"
                : output.trimmingCharacters(in: .whitespacesAndNewlines)
            print("FAILED  \(name): \(how)")
        }
    }
}
print("\(passed) passed, \(failed) failed")
exit(failed == 0 ? 0 : 1)
#else
print("stack-safety runs each scenario in a child process: run it on macOS or Linux")
exit(2)
#endif
