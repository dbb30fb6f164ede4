import Foundation
import PromiseCore

// Races leave their losers pending on purpose; that is not worth a warning per promise here.
conf.logHandler = { _ in }

// Usage: promise-benchmarks [--rounds N] [--json FILE]
//        promise-benchmarks --child deep-chain CONTESTANT LINKS   (internal: a chain that may crash)

#if BASELINE
// Benchmarks/scripts/baseline.sh REF: the library as it was at REF, beside the current one.
let baseline: [any Contestant] = [BaselineContestant()]
silenceBaselineLogs()
#else
let baseline: [any Contestant] = []
#endif
let contestants: [any Contestant] =
    [FloorContestant(), PromiseCoreContestant()] + baseline
    + [NIOContestant(), ConcurrencyContestant(), OpenCombineContestant()]

struct Workload {
    let name: String
    let unit: String
    let run: (any Contestant) -> Double?
}

let allWorkloads: [Workload] = [
    Workload(name: "create + fulfill + 1 handler", unit: "ns/promise") { $0.createFulfilHandler(100_000) },
    Workload(name: "create + fulfill + map", unit: "ns/promise") { $0.createFulfilMap(100_000) },
    Workload(name: "100k-link chain", unit: "ns/link") { $0.chain(100_000) },
    Workload(name: "when(fulfilled:) × 1k", unit: "ns/element") { $0.when(1_000) },
    Workload(name: "when(fulfilled:) × 10k", unit: "ns/element") { $0.when(10_000) },
    Workload(name: "when(fulfilled:) × 100k", unit: "ns/element") { $0.when(100_000) },
    Workload(name: "race × 10k", unit: "ns/element") { $0.race(10_000) },
    Workload(name: "race autoCancel × 10k", unit: "ns/element") { $0.raceAutoCancel(10_000) },
    Workload(name: "any + some × 10k", unit: "ns/element") { $0.anySome(10_000) },
    Workload(name: "cross-thread fulfill × 200k", unit: "ns/promise") { $0.crossThread(200_000) },
    Workload(name: "create + map + done", unit: "ns/promise") { $0.createMapDone(100_000) },
    Workload(name: "cross-thread map + done × 200k", unit: "ns/promise") { $0.crossThreadMapDone(200_000) },
    Workload(name: "cancel-one", unit: "ns/op") { $0.cancelOne(100_000) },
    Workload(name: "cancel-chain × 10k", unit: "ns/link") { $0.cancelChain(10_000) },
    Workload(name: "race-cancel × 10k", unit: "ns/element") { $0.raceCancel(10_000) },
    Workload(name: "race-cancel shared × 10k", unit: "ns/element") { $0.raceCancelShared(10_000) },
]

let arguments = CommandLine.arguments
// --only PREFIX[,PREFIX…]: run just the workloads whose names start with one of the prefixes (and skip the
// memory and deep-chain child runs); for quick comparisons while optimising, not for publishing.
let only = arguments.firstIndex(of: "--only").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
let workloads =
    only.map { list in
        allWorkloads.filter { workload in list.split(separator: ",").contains { workload.name.hasPrefix($0) } }
    } ?? allWorkloads
// Profiling: promise-benchmarks --profile CONTESTANT WORKLOAD-PREFIX runs one workload once, untimed.
if arguments.count >= 4, arguments[1] == "--profile" {
    let contestant = contestants.first { $0.name == arguments[2] }!
    let workload = workloads.first { $0.name.hasPrefix(arguments[3]) }!
    blackHole(workload.run(contestant))
    exit(0)
}
if arguments.count >= 5, arguments[1] == "--child" {
    let contestant = contestants.first { $0.name == arguments[3] }!
    switch arguments[2] {
    case "deep-chain":
        contestant.deepChain(Int(arguments[4])!)
    case "memory":
        print(contestant.bytesPerPendingPromise(Int(arguments[4])!).map { String($0) } ?? "n/a")
    case "memory-map":
        print(contestant.bytesPerPendingMap(Int(arguments[4])!).map { String($0) } ?? "n/a")
    case "memory-cancellable-map":
        print(contestant.bytesPerPendingCancellableMap(Int(arguments[4])!).map { String($0) } ?? "n/a")
    default:
        break
    }
    exit(0)
}

/// Runs this program again with `arguments`; returns its exit status (nil if killed) and its output.
func child(_ arguments: [String]) throws -> (status: Int32?, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = ["--child"] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let exited = process.terminationReason == .exit
    return (exited ? process.terminationStatus : nil, output.trimmingCharacters(in: .whitespacesAndNewlines))
}

func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

let rounds = Int(option("--rounds") ?? "") ?? 5
var samples: [String: [String: [Double]]] = [:]

print("PromiseCore benchmarks — \(rounds) rounds, contestants interleaved within each round; median shown.")
print(
    "Machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, "
        + ProcessInfo.processInfo.operatingSystemVersionString
)
for contestant in contestants {
    print("  \(contestant.name): \(contestant.mode)")
}
print(
    "PromiseCore creation-site recording (debug builds only): "
        + (PromiseDiagnostics.recordsCreationSites ? "ON — this is not a release build" : "off in this build")
)
/// The timed workloads run on a thread with a 1 GiB stack: the floor resolves chains by recursion and would
/// overflow the default 8 MiB on the 100k-link chain. Surviving a default stack is checked separately, below.
final class Samples: @unchecked Sendable {
    // @unchecked Sendable: written by the benchmark thread, read after it has finished.
    var values: [String: [String: [Double]]] = [:]
}
let collected = Samples()
let finished = DispatchSemaphore(value: 0)
let plan = UncheckedBox((contestants: contestants, workloads: workloads, rounds: rounds))
let runner = Thread {
    let (contestants, workloads, rounds) = plan.value
    for round in 0..<rounds {
        FileHandle.standardError.write(Data("round \(round + 1)/\(rounds)\n".utf8))
        for workload in workloads {
            // Rotate the order each round so that no contestant always runs first (warm caches, a fresh heap).
            let order = contestants.indices.map { contestants[($0 + round) % contestants.count] }
            for contestant in order {
                if let value = workload.run(contestant) {
                    collected.values[workload.name, default: [:]][contestant.name, default: []].append(value)
                }
            }
        }
    }
    finished.signal()
}
runner.stackSize = 1 << 30
runner.start()
finished.wait()
samples = collected.values

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Memory: 1M live pending promises with one handler (or one `map` step) each, each contestant in a fresh child
/// process.
var memory: [String: Double] = [:]
var memoryWithMap: [String: Double] = [:]
var memoryCancellableMap: [String: Double] = [:]
for contestant in contestants where only == nil {
    if let bytes = Double(try child(["memory-cancellable-map", contestant.name, "1000000"]).output) {
        memoryCancellableMap[contestant.name] = bytes
    }
    if let bytes = Double(try child(["memory", contestant.name, "1000000"]).output) { memory[contestant.name] = bytes }
    if let bytes = Double(try child(["memory-map", contestant.name, "1000000"]).output) {
        memoryWithMap[contestant.name] = bytes
    }
}

/// 1M-link chains, each in a child process with the default 8 MiB stack: crash or not.
var deepChain: [String: String] = [:]
for contestant in contestants where only == nil && contestant.chain(10) != nil {
    let status = try child(["deep-chain", contestant.name, "1000000"]).status
    deepChain[contestant.name] = status == 0 ? "completes" : "crashes"
}

func cell(_ text: String, _ width: Int = 19) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }

print("")
print(cell("workload", 30) + contestants.map { cell($0.name) }.joined())
var results: [[String: Any]] = []
for workload in workloads {
    let floor = samples[workload.name]?["floor"].map(median)
    var line = cell(workload.name, 30)
    for contestant in contestants {
        guard let values = samples[workload.name]?[contestant.name] else {
            line += cell("n/a")
            continue
        }
        let value = median(values)
        let ratio = floor.map { value / $0 }
        line += cell(String(format: "%.0f", value) + (ratio.map { String(format: " (%.2f×)", $0) } ?? ""))
        results.append([
            "workload": workload.name, "unit": workload.unit, "contestant": contestant.name, "median": value,
            "ratioToFloor": ratio ?? NSNull(), "samples": values,
        ])
    }
    print(line + "  " + workload.unit)
}
print(
    cell("bytes/pending promise + handler", 30)
        + contestants.map { c in cell(memory[c.name].map { String(format: "%.0f", $0) } ?? "n/a") }.joined()
)
print(
    cell("bytes/pending promise + map", 30)
        + contestants.map { c in cell(memoryWithMap[c.name].map { String(format: "%.0f", $0) } ?? "n/a") }.joined()
)
print(
    cell("bytes/pending cancellable + map", 30)
        + contestants.map { c in cell(memoryCancellableMap[c.name].map { String(format: "%.0f", $0) } ?? "n/a") }
        .joined()
)
print(cell("1M-link chain, 8 MiB stack", 30) + contestants.map { cell(deepChain[$0.name] ?? "n/a") }.joined())
print("")
print(
    "Ratios are to the floor (a minimal lock-based promise, handlers inline; for cancel-one, cancel-chain,"
        + " race-cancel and race-cancel shared, the minimal cancellable floor): lower is better."
)

if let path = option("--json") {
    let document: [String: Any] = [
        "rounds": rounds,
        "cores": ProcessInfo.processInfo.activeProcessorCount,
        "contestants": contestants.map { ["name": $0.name, "mode": $0.mode] },
        "results": results,
        "bytesPerPendingPromise": memory,
        "bytesPerPendingMap": memoryWithMap,
        "bytesPerPendingCancellableMap": memoryCancellableMap,
        "deepChain": deepChain,
    ]
    let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
    try data.write(to: URL(fileURLWithPath: path))
}
