import CancellableURLSession
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Live progress, one line per mirror, redrawn in place on a terminal (a line per update otherwise).
final class ProgressBoard: @unchecked Sendable {
    // @unchecked Sendable: `latest` is only touched under `lock`.
    private var names: [String]
    private let lock = NSLock()
    private var latest: [TransferProgress?]
    /// When each mirror's byte count last went up.
    private var advancedAt: [Date?]
    private var drawnLines = 0
    private let isTerminal = isatty(STDOUT_FILENO) == 1

    init(names: [String]) {
        self.names = names
        latest = Array(repeating: nil, count: names.count)
        advancedAt = Array(repeating: nil, count: names.count)
    }

    func update(_ mirror: Int, _ progress: TransferProgress) {
        lock.lock()
        if progress.bytesTransferred != latest[mirror]?.bytesTransferred {
            advancedAt[mirror] = Date()
        }
        latest[mirror] = progress
        lock.unlock()
    }

    /// Renames a row: the download it shows moved to another mirror.
    func rename(_ mirror: Int, to name: String) {
        lock.lock()
        names[mirror] = name
        lock.unlock()
    }

    /// Calls `onStall` once (on a global queue) with the first mirror that, having started, receives nothing for
    /// `seconds` before finishing.
    func watchForStall(after seconds: Double, _ onStall: @escaping @Sendable (Int) -> Void) -> DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now(), repeating: .milliseconds(50))
        timer.setEventHandler { [self] in
            guard let mirror = stalledMirror(after: seconds) else { return }
            timer.cancel()
            onStall(mirror)
        }
        timer.resume()
        return timer
    }

    private func stalledMirror(after seconds: Double) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        return latest.indices.first { mirror in
            guard let progress = latest[mirror], let advancedAt = advancedAt[mirror] else { return false }
            return progress.bytesTransferred < (progress.totalBytesExpected ?? .max)
                && Date().timeIntervalSince(advancedAt) > seconds
        }
    }

    /// Redraws every 100 ms (every second when not on a terminal) until cancelled.
    func startDisplaying() -> DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now(), repeating: isTerminal ? .milliseconds(100) : .seconds(1))
        timer.setEventHandler { [self] in render(final: false) }
        timer.resume()
        return timer
    }

    func render(final: Bool) {
        lock.lock()
        defer { lock.unlock() }
        var output = ""
        if isTerminal && drawnLines > 0 {
            output += "\u{1B}[\(drawnLines)A"
        }
        for (name, progress) in zip(names, latest) {
            output += line(name, progress) + (isTerminal ? "\u{1B}[K\n" : "\n")
        }
        drawnLines = names.count
        _ = output.withCString { write(STDOUT_FILENO, $0, strlen($0)) }
    }

    private func line(_ name: String, _ progress: TransferProgress?) -> String {
        let width = 30
        guard let progress else { return name.padding(toLength: 24, withPad: " ", startingAt: 0) + " waiting" }
        let fraction = min(1, progress.fractionCompleted ?? 0)
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        return name.padding(toLength: 24, withPad: " ", startingAt: 0)
            + " \(bar) \(String(format: "%5.1f", fraction * 100))%  \(format(bytes: Int(progress.bytesTransferred)))"
    }
}
