import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

// What every contestant's adapter shares: measuring memory, counters for callbacks that must be `@Sendable`.

/// Resident memory of this process, from /proc/self/statm (Linux); 0 elsewhere.
func residentBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Bytes per element held by `make`: resident-set growth while `count` of them are alive, minus the array
/// of references holding them. Run in a fresh child process, so that no freed heap is reused.
func bytesPerElement<T>(_ count: Int, _ make: () -> T) -> Double {
    var keep: [T] = []
    keep.reserveCapacity(count)
    for index in 0..<count { keep.append(make()); if index == 0 { keep.removeAll(keepingCapacity: true) } }
    let before = residentBytes()
    for _ in 0..<count { keep.append(make()) }
    let after = residentBytes()
    blackHole(keep)
    return Double(after - before) / Double(count)
}

/// A mutable value for callbacks that must be `@Sendable` (NIO's), in single-threaded workloads.
final class Accumulator: @unchecked Sendable {
    var value = 0
    var flag = false
}

final class Counter: @unchecked Sendable {
    // @unchecked Sendable: only touched under `lock`, or by one thread at a time as the workload says.
    let lock = NSLock()
    var value = 0
    let target: Int
    let done = DispatchSemaphore(value: 0)

    init(target: Int) { self.target = target }

    func increment() {
        lock.lock()
        value += 1
        let finished = value == target
        lock.unlock()
        if finished { done.signal() }
    }
}

struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
