import Cancellable
import Foundation
import MallocCounter
import PromiseCore

// Allocation budgets: how many heap allocations each hot operation makes, counted (not timed: counts do not move
// between runs on a noisy machine), against a budget. `.ci/run` fails if any count rises above its budget.
//
// Usage: allocation-budgets [--extra-allocation]   (the flag adds one allocation to create + map + done: it shows
//                                                    that a regression fails the check)

conf.logHandler = { _ in }  // races leave losers pending on purpose

/// One operation and its budget: allocations per unit, each one accounted for.
struct Budget {
    let name: String
    let unit: String
    /// How many units one call of `run` performs.
    let units: Int
    /// Allocations per unit.
    let budget: Int
    /// Allocations per call, whatever its units: a combinator's own promise, its arrays.
    var perCall = 0
    /// Where each allocation comes from.
    let reasons: String
    let run: () -> Void
}

/// An allocation this program adds on purpose with `--extra-allocation`.
final class Deliberate {}
let extraAllocation = CommandLine.arguments.contains("--extra-allocation")

/// Keeps results alive past the measured region without the optimizer discarding them.
@inline(never)
func keep<T>(_ value: T) { withExtendedLifetime(value) {} }

let inputs = 1_000

/// What the operations count, in globals: a captured local `var` would add a box allocation of the harness's own.
enum Counts {
    nonisolated(unsafe) static var handlers = 0
    nonisolated(unsafe) static var observed = 0
    /// The error the recover row rejects with: made once (an error is boxed when it becomes `any Error`).
    nonisolated(unsafe) static var error: any Error = BudgetError()
    /// Where `--extra-allocation` stores its object, so that it escapes (and is not made on the stack).
    nonisolated(unsafe) static var deliberate: Deliberate?
}

/// An error that no catch policy skips (it is no cancellation).
struct BudgetError: Error {}

/// `inputs` cancellable promises with a cancel handler each, and the resolver of the middle one.
func cancellableInputs() -> (PromiseCore.Resolver<Int>, [CancellablePromise<Int>]) {
    var winner: PromiseCore.Resolver<Int>?
    var promises: [CancellablePromise<Int>] = []
    promises.reserveCapacity(inputs)
    for index in 0..<inputs {
        promises.append(
            CancellablePromise<Int> { resolver in
                if index == inputs / 2 { winner = resolver }
                return { Counts.handlers &+= 1 }
            }
        )
    }
    return (winner!, promises)
}

let budgets: [Budget] = [
    Budget(
        name: "create + map + done",
        unit: "promise",
        units: 1,
        budget: 3,
        reasons: """
            the root's box (1; its Resolver is a value, no object); map's promise, which holds the transform: the \
            handler on the root captures only it, so the promise is the handler's context (1); done's promise, \
            likewise (1)
            """
    ) {
        let (promise, resolver) = Promise<Int>.pending()
        let done = promise.map(on: nil) { $0 &+ 1 }.done(on: nil) { keep($0) }
        if extraAllocation { Counts.deliberate = Deliberate() }
        resolver.fulfill(1)
        keep(done)
    },
    Budget(
        name: "chain link (map)",
        unit: "link",
        units: inputs,
        budget: 1,
        perCall: 1,
        reasons: """
            the link's promise, which holds the transform and is the context of its handler on the promise before \
            it (1). Per call: the root's box (1)
            """
    ) {
        let (root, resolver) = Promise<Int>.pending()
        var last = root
        for _ in 0..<inputs { last = last.map(on: nil) { $0 &+ 1 } }
        resolver.fulfill(0)
        keep(last)
    },
    Budget(
        name: "create + ensure",
        unit: "promise",
        units: 1,
        budget: 2,
        reasons: """
            the root's box (1); ensure's promise, which holds the body and is its handler's context on the root (1; \
            it was 4 before it became one object: a promise, the handler's context, and two closure contexts of the \
            hop to the queue, made even without one)
            """
    ) {
        let (promise, resolver) = Promise<Int>.pending()
        let ensured = promise.ensure(on: nil) { Counts.handlers &+= 1 }
        resolver.fulfill(1)
        keep(ensured)
    },
    Budget(
        name: "create + recover (rejected)",
        unit: "promise",
        units: 1,
        budget: 3,
        reasons: """
            the root's box (1); recover's promise, which holds the body and is its handler's context on the root \
            (1); the promise the body returns (1: `Promise.value`), which the link follows with a handler that \
            captures only the link (0). The recover was 4 before it became one object: a promise, the handler's \
            context and two for the hop, made even without a queue
            """
    ) {
        let (promise, resolver) = Promise<Int>.pending()
        let recovered = promise.recover(on: nil) { _ in Promise.value(1) }
        resolver.reject(Counts.error)
        keep(recovered)
    },
    Budget(
        name: "create + catch (rejected)",
        unit: "promise",
        units: 1,
        budget: 2,
        reasons: """
            the root's box (1); the finalizer's guarantee, which holds the body and is its handler's context on the \
            root (1); the PMKFinalizer does not escape here (most are discarded) and lives on the stack (0). The \
            catch was 5 before its guarantee held the body: the finalizer, its guarantee, the handler's context and \
            two for the hop, made even without a queue
            """
    ) {
        let (promise, resolver) = Promise<Int>.pending()
        let finalizer = promise.catch(on: nil) { _ in Counts.handlers &+= 1 }
        resolver.reject(Counts.error)
        keep(finalizer)
    },
    Budget(
        name: "when(fulfilled:)",
        unit: "input",
        units: inputs,
        budget: 2,
        perCall: 6,
        reasons: """
            per input: the input's box (1, made by the operation: `Promise.pending()`; its Resolver is a value); \
            when's handler on the input (1). Per call (6): the inputs arrays, the result's box, the join state and \
            its values array
            """
    ) {
        let pending = (0..<inputs).map { _ in Promise<Int>.pending() }
        let all = PromiseCore.when(fulfilled: pending.map(\.promise))
        for (index, item) in pending.enumerated() { item.resolver.fulfill(index) }
        keep(all)
    },
    Budget(
        name: "race",
        unit: "input",
        units: inputs,
        budget: 1,
        perCall: 3,
        reasons: """
            per input: the input's box (1, made by the operation; its Resolver is a value); the race's handlers \
            share one context (0). Per call (3): the inputs arrays and the race's box
            """
    ) {
        let pending = (0..<inputs).map { _ in Promise<Int>.pending() }
        let first = PromiseCore.race(pending.map(\.promise))
        pending[inputs / 2].resolver.fulfill(1)
        keep(first)
    },
    Budget(
        name: "cancel-one",
        unit: "operation",
        units: 1,
        budget: 6,
        reasons: """
            the work: its box, cancellation state, the side table of the state's weak reference to the box, made \
            when the map link votes on it (3); the map link: its CancellablePromise object, box (which holds the \
            step and is its handler's context) and cancellation state (3; nothing votes on it, so it has no weak \
            reference; its vote on the work is kept in the work's state, the first vote on it). The work's \
            CancellablePromise object does not escape and lives on the stack (the Resolver is a value over the box); \
            both rejections share one CancellablePromiseError box, made once; the cancel handler and the observer \
            capture only globals (0)
            """
    ) {
        let work = CancellablePromise<Int> { _ in { Counts.handlers &+= 1 } }
        let mapped = work.map(on: nil) { $0 &+ 1 }
        mapped.pipe { if case .rejected = $0 { Counts.observed &+= 1 } }
        mapped.cancel()
    },
    Budget(
        name: "cancellable link (map)",
        unit: "link",
        units: inputs,
        budget: 4,
        perCall: 3,
        reasons: """
            the link's CancellablePromise object, box, cancellation state and the side table of the weak reference the \
            next link's vote makes (4); its vote on the upstream is kept in the upstream's state, the first vote on \
            it (0); its handler on the upstream box captures only the box, which holds the step \
            (0). Per call (3): the root, less the side table of the last link, which nothing votes on
            """
    ) {
        let (root, resolver) = CancellablePromise<Int>.pending()
        var last = root
        for _ in 0..<inputs { last = last.map(on: nil) { $0 &+ 1 } }
        resolver.fulfill(0)
        keep(last)
    },
    Budget(
        name: "race-cancel",
        unit: "input",
        units: inputs,
        budget: 4,
        perCall: 10,
        reasons: """
            per input, made by the operation: its CancellablePromise object, box, cancellation state, and the side \
            table of the weak reference the race's vote makes (4; the Resolver is a value over the box, which holds \
            the state); the race's vote on it is kept in the input's state, the first vote on it (0). The race's \
            handlers share one context, the losers' rejections share one error box, made once, the cancel handler \
            captures only globals (0). Per call (10): the inputs array, the race's votes array, its own promise \
            (object, box, state: nothing votes on it) and its handler's context
            """
    ) {
        let (winner, promises) = cancellableInputs()
        let first = race(promises, autoCancel: true)
        winner.fulfill(1)
        precondition(first.value == 1)
    },
    Budget(
        name: "race(fulfilled:)-cancel, one fails",
        unit: "input",
        units: inputs,
        budget: 4,
        perCall: 13,
        reasons: """
            per input, as race-cancel (4): a failure decides nothing, so the race needs no more per input. Per call \
            (13): race-cancel's (10), the state that counts the failures (1: a lock around it), the array of their \
            errors, made at the first (1), and the cancelled input's own error box (1)
            """
    ) {
        let (winner, promises) = cancellableInputs()
        let first = race(fulfilled: promises, autoCancel: true)
        promises[0].cancel()
        winner.fulfill(1)
        precondition(first.value == 1)
    },
    Budget(
        name: "race-cancel, inputs shared by two races",
        unit: "input",
        units: inputs,
        budget: 7,
        perCall: 19,
        reasons: """
            as race-cancel (4), plus the second race's vote on each input (1: an object, the input's slot is taken), \
            its handler's context (1) and the array that holds a second handler on each input's box (1: the first \
            handler is stored inline). Per call: both races' own (19)
            """
    ) {
        let (winner, promises) = cancellableInputs()
        let first = race(promises, autoCancel: true)
        let second = race(promises, autoCancel: true)
        winner.fulfill(1)
        precondition(first.value == 1 && second.value == 1)
    },
    Budget(
        name: "pending cancellable promise + map",
        unit: "promise",
        units: 1,
        budget: 6,
        reasons: """
            the promise: box, cancellation state, the side table of the weak reference the map link's vote makes (3; \
            its CancellablePromise object does not escape here and lives on the stack, the Resolver is a value over \
            the box); the map link: its CancellablePromise object, box (its handler's context) and cancellation \
            state (3; nothing votes on it; its vote is kept in the promise's state)
            """
    ) {
        let (promise, resolver) = CancellablePromise<Int>.pending()
        let mapped = promise.map(on: nil) { _ in }
        keep((mapped, resolver))
    },
    Budget(
        name: "dropping a pending cancellable chain",
        unit: "link",
        units: inputs,
        budget: 4,
        perCall: 2,
        reasons: """
            as cancellable link (4); dropping the chain, each link withdrawing its vote on the one before in one \
            loop, allocates nothing more. Per call (2): the root, less the side table of the last link
            """
    ) {
        let (root, resolver) = CancellablePromise<Int>.pending()
        var last = root
        for _ in 0..<inputs { last = last.map(on: nil) { $0 &+ 1 } }
        keep((last, resolver))
    },
]

guard malloc_counter_is_active() != 0 else {
    print("allocation-budgets: allocations are counted on Linux with glibc only; nothing checked here")
    exit(0)
}

// ALLOCATION_TRACE=NAME-PREFIX: print the call stack of each allocation one call of that operation makes.
if let traced = ProcessInfo.processInfo.environment["ALLOCATION_TRACE"],
    let budget = budgets.first(where: { $0.name.hasPrefix(traced) })
{
    for _ in 0..<20 { budget.run() }
    malloc_counter_trace(1)
    budget.run()
    malloc_counter_trace(0)
    exit(0)
}

let calls = 200
var failed = false
func cell(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
print(cell("operation", 42) + cell("allocations", 14) + cell("budget", 16) + "per")
for budget in budgets {
    for _ in 0..<20 { budget.run() }  // warm up: lazily made globals, metadata caches, the cancel loop's stack
    let before = malloc_counter_allocations()
    for _ in 0..<calls { budget.run() }
    let total = malloc_counter_allocations() - before
    // Every call allocates the same: a total that is not a whole number of calls' worth is a regression too.
    let perCallAllowed: Int = budget.budget * budget.units + budget.perCall
    let allowed: Int64 = Int64(calls * perCallAllowed)
    let over = total > allowed
    if over { failed = true }
    let counted: Double = Double(total) / Double(calls * budget.units)
    let budgetText: String = "\(budget.budget)" + (budget.perCall > 0 ? " + \(budget.perCall)/call" : "")
    let verdict: String = over ? "   OVER BUDGET by \(total - allowed) in \(calls) calls" : ""
    let row: String = cell(budget.name, 42) + cell(String(format: "%.3f", counted), 14) + cell(budgetText, 16)
    print(row + budget.unit + verdict)
    if over { print("    budget: \(budget.reasons)") }
}
if failed {
    print("FAIL: an operation allocates more than its budget (Benchmarks/Sources/AllocationBudgets/main.swift)")
    exit(1)
}
print("every operation within its budget")
