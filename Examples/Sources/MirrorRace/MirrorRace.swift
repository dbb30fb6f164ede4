import ArgumentParser
import Cancellable
import CancellableURLSession
import Dispatch
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@main
struct MirrorRace: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mirror-race",
        abstract: "Race one download across several throttled mirrors; the losers stop transferring.",
        discussion: """
            Starts an HTTP server on 127.0.0.1 that serves the same file from every mirror, each throttled to \
            its own speed, then downloads from all of them with race(_:autoCancel: true). When the fastest \
            finishes, the others are cancelled; the summary shows, measured by the server, how many bytes each \
            loser had received and how soon after the winner finished its connection was closed. Ctrl-C \
            cancels every download.
            """
    )

    @Option(name: .shortAndLong, help: "File size in MiB.")
    var size: Double = 8

    @Option(
        name: .long,
        parsing: .upToNextOption,
        help: "Mirror speeds in KiB/s, fastest wins (default: 4096 2048 1024, or halving from 4096 for --mirrors)."
    )
    var speeds: [Int] = []

    @Option(name: .shortAndLong, help: "Number of mirrors (ignored when --speeds is given).")
    var mirrors: Int = 3

    @Option(name: .shortAndLong, help: "Give up (and cancel every download) after this many seconds.")
    var timeout: Double = 60

    mutating func validate() throws {
        guard size > 0 else { throw ValidationError("--size must be positive") }
        guard speeds.isEmpty ? mirrors >= 1 : speeds.allSatisfy({ $0 > 0 }) else {
            throw ValidationError("need at least one mirror, each with a positive speed")
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
    }

    func run() async throws {
        let kibPerSecond = speeds.isEmpty ? (0..<mirrors).map { max(1, 4_096 >> $0) } : speeds
        let fileSize = Int(size * 1_048_576)
        let server = MirrorServer(fileSize: fileSize, bytesPerSecond: kibPerSecond.map { $0 * 1_024 })
        let (port, serverTask) = try await server.start()
        defer { serverTask.cancel() }
        say("Serving \(format(bytes: fileSize)) from \(kibPerSecond.count) mirrors on 127.0.0.1:\(port)")

        let session = URLSession.withProgressReporting(configuration: .ephemeral)
        let progress = ProgressBoard(
            names: kibPerSecond.enumerated().map { "mirror \($0.offset) (\($0.element) KiB/s)" }
        )
        let temporary = FileManager.default.temporaryDirectory
        let destinations = kibPerSecond.indices.map {
            temporary.appendingPathComponent("mirror-race-\(UUID())-\($0).bin")
        }
        defer { destinations.forEach { try? FileManager.default.removeItem(at: $0) } }

        let downloads = kibPerSecond.indices.map { mirror in
            session.cancellableDownload(
                for: URLRequest(url: URL(string: "http://127.0.0.1:\(port)/mirror/\(mirror)/file.bin")!),
                to: destinations[mirror]
            ) { progress.update(mirror, $0) }
        }
        let started = Date()
        let winner = race(
            downloads.enumerated().map { index, download in download.map(on: nil) { _ in index } },
            autoCancel: true
        ).timeout(seconds: timeout)

        // Ctrl-C cancels the race, which cancels every download.
        let interrupt = onInterrupt { winner.cancel() }
        defer { interrupt.cancel() }

        let display = progress.startDisplaying()
        let outcome = await winner.asPromise().asResult().async()
        display.cancel()
        progress.render(final: true)

        // Give the server a moment to see every loser's connection close: it is what the summary reports.
        await waitUntil(seconds: 2) {
            kibPerSecond.indices.allSatisfy {
                server.stats(of: $0).finishedAt != nil || server.stats(of: $0).clientClosedAt != nil
            }
        }
        summarize(outcome, started: started, fileSize: fileSize, server: server, mirrors: kibPerSecond.count)
        if case .failure(let error) = outcome {
            throw ExitCode(error.isCancelled ? 130 : 1)
        }
    }

    private func summarize(
        _ outcome: Swift.Result<Int, Error>,
        started: Date,
        fileSize: Int,
        server: MirrorServer,
        mirrors: Int
    ) {
        say()
        switch outcome {
        case .success(let winner):
            let elapsed = Date().timeIntervalSince(started)
            let finishedAt = server.stats(of: winner).finishedAt ?? Date()
            say("Winner: mirror \(winner) — \(format(bytes: fileSize)) in \(String(format: "%.2f", elapsed)) s")
            var loserBytes = 0
            for mirror in 0..<mirrors where mirror != winner {
                let stats = server.stats(of: mirror)
                loserBytes += stats.bytesSent
                let closed =
                    stats.clientClosedAt.map {
                        "connection closed \(Int($0.timeIntervalSince(finishedAt) * 1_000)) ms after the winner finished"
                    }
                    ?? "connection not closed"
                say("Loser:  mirror \(mirror) — had transferred \(format(bytes: stats.bytesSent)); \(closed)")
            }
            say("Losers transferred \(format(bytes: loserBytes)) in total before they were stopped.")
        case .failure(let error) where error.isCancelled:
            say("Cancelled: every download was stopped.")
            reportServerSide(server, mirrors: mirrors)
        case .failure(let error as TimeoutError):
            say("Timed out after \(error.seconds) s: every download was stopped.")
            reportServerSide(server, mirrors: mirrors)
        case .failure(let error):
            say("Failed: \(error)")
        }
    }

    private func reportServerSide(_ server: MirrorServer, mirrors: Int) {
        for mirror in 0..<mirrors {
            let stats = server.stats(of: mirror)
            say("  mirror \(mirror): \(format(bytes: stats.bytesSent)) sent, closed: \(stats.clientClosedAt != nil)")
        }
    }

    private func waitUntil(seconds: Double, _ condition: () -> Bool) async {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !condition() && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}

func format(bytes: Int) -> String {
    bytes >= 1_048_576
        ? String(format: "%.1f MiB", Double(bytes) / 1_048_576)
        : String(format: "%.0f KiB", Double(bytes) / 1_024)
}
