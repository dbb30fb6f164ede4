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
    private let names: [String]
    private let lock = NSLock()
    private var latest: [TransferProgress?]
    private var drawnLines = 0
    private let isTerminal = isatty(STDOUT_FILENO) == 1

    init(names: [String]) {
        self.names = names
        latest = Array(repeating: nil, count: names.count)
    }

    func update(_ mirror: Int, _ progress: TransferProgress) {
        lock.lock()
        latest[mirror] = progress
        lock.unlock()
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
