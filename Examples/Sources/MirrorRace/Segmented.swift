import ArgumentParser
import Cancellable
import CancellableURLSession
import Foundation
import MirrorServer
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `--segmented`: the same file pulled from every mirror at once, in segments, next to the race of the same mirrors.
extension MirrorRace {
    /// What one way of downloading cost: how long it took, and what the servers sent that is not in the file.
    struct Cost {
        let seconds: Double
        let bytesSent: Int
        let fileSize: Int
        /// The fastest any client could be on these mirrors: every mirror busy all the time.
        let ideal: Double

        var wasted: Int { bytesSent - fileSize }
    }

    func runSegmented(kibPerSecond: [Int], fileSize: Int) async throws {
        let ideal = Double(fileSize) / Double(kibPerSecond.reduce(0, +) * 1_024)
        say(
            "Ideal for \(format(bytes: fileSize)) from \(kibPerSecond.count) mirrors (the sum of their speeds): "
                + String(format: "%.2f s", ideal)
        )
        // The race first, on healthy mirrors: what the segmented download is compared with.
        say()
        say("Race (race(fulfilled:autoCancel: true), the fastest mirror's download wins):")
        let race = try await raceOnce(kibPerSecond: kibPerSecond, fileSize: fileSize)
        say()
        let down = kibPerSecond.indices.sorted { kibPerSecond[$0] > kibPerSecond[$1] }.dropFirst().first
        if mirrorDown, let down {
            say("Segmented, every mirror at once; mirror \(down) goes down half-way through its share:")
        } else {
            say("Segmented, every mirror at once:")
        }
        let segmented = try await segmentedOnce(
            kibPerSecond: kibPerSecond,
            fileSize: fileSize,
            dying: mirrorDown ? down : nil
        )
        say()
        say("                 time      of ideal   bytes sent   wasted")
        for (name, cost) in [("race", race), ("segmented", segmented)] {
            say(
                name.padding(toLength: 14, withPad: " ", startingAt: 0)
                    + String(format: "%7.2f s   %5.0f%%   ", cost.seconds, cost.ideal / cost.seconds * 100)
                    + format(bytes: cost.bytesSent).padding(toLength: 12, withPad: " ", startingAt: 0)
                    + " \(format(bytes: cost.wasted)) (\(cost.wasted * 100 / cost.fileSize)% of the file)"
            )
        }
    }

    /// Races one download per mirror, as the default mode does, and reports what it cost.
    private func raceOnce(kibPerSecond: [Int], fileSize: Int) async throws -> Cost {
        let server = MirrorServer(fileSize: fileSize, bytesPerSecond: kibPerSecond.map { $0 * 1_024 })
        let (port, serverTask) = try await server.start()
        defer { serverTask.cancel() }
        let session = URLSession.withProgressReporting(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let directory = FileManager.default.temporaryDirectory
        let destinations = kibPerSecond.indices.map { directory.appendingPathComponent("race-\(UUID())-\($0).bin") }
        defer { destinations.forEach { try? FileManager.default.removeItem(at: $0) } }
        let started = Date()
        let downloads = kibPerSecond.indices.map { mirror in
            session.cancellableDownload(
                from: URL(string: "http://127.0.0.1:\(port)/mirror/\(mirror)/file.bin")!,
                to: destinations[mirror]
            )
            .map(on: nil) { _ in mirror }
        }
        let scope = CancelScope()
        let interrupt = onInterrupt { scope.cancelAll() }
        defer { interrupt.cancel() }
        let winner = try await scope.add(race(fulfilled: downloads, autoCancel: true).timeout(seconds: timeout)).async()
        let seconds = Date().timeIntervalSince(started)
        await waitForConnections(server, mirrors: kibPerSecond.count)
        let sent = kibPerSecond.indices.map { server.stats(of: $0).bytesSent }.reduce(0, +)
        say("  mirror \(winner) won in \(String(format: "%.2f", seconds)) s; the others were cancelled.")
        let ideal = Double(fileSize) / Double(kibPerSecond.reduce(0, +) * 1_024)
        return Cost(seconds: seconds, bytesSent: sent, fileSize: fileSize, ideal: ideal)
    }

    /// Pulls the file from every mirror at once with `segmentedDownload`, showing each mirror's share live.
    private func segmentedOnce(kibPerSecond: [Int], fileSize: Int, dying: Int?) async throws -> Cost {
        // Half of what its share of the file would be: the dying mirror goes down in the middle of the download.
        let sentBeforeDying = dying.map { fileSize * kibPerSecond[$0] / kibPerSecond.reduce(0, +) / 2 } ?? 0
        let server = MirrorServer(
            fileSize: fileSize,
            bytesPerSecond: kibPerSecond.map { $0 * 1_024 },
            diesAfter: dying.map { [$0: sentBeforeDying] } ?? [:]
        )
        // Every mirror busy all the time; the dying one only until it has sent what it sends.
        let speed = kibPerSecond.indices.filter { $0 != dying }.map { kibPerSecond[$0] * 1_024 }.reduce(0, +)
        let ideal = Double(fileSize - sentBeforeDying) / Double(speed)
        let (port, serverTask) = try await server.start()
        defer { serverTask.cancel() }
        let session = URLSession.withProgressReporting(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("segmented-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: destination) }
        let names = kibPerSecond.enumerated().map { "mirror \($0.offset) (\($0.element) KiB/s)" }
        let board = ProgressBoard(names: names)
        let dropped = Locked<Set<Int>>([])

        var options = SegmentedDownloadOptions()
        options.segmentSize = Int64(max(256 * 1_024, fileSize / 16))
        options.minimumSplitSize = 128 * 1_024
        options.stallTimeout = 2
        let (source, _) = server.current
        let started = Date()
        let download = session.segmentedDownload(
            from: kibPerSecond.indices.map { URL(string: "http://127.0.0.1:\(port)/mirror/\($0)/file.bin")! },
            to: destination,
            verifying: DownloadIntegrity(length: Int64(fileSize)),
            options: options
        ) { progress in
            for (index, mirror) in progress.mirrors.enumerated() {
                board.update(
                    index,
                    TransferProgress(bytesTransferred: mirror.bytesWritten, totalBytesExpected: progress.totalBytes)
                )
                if mirror.dropped != nil, !dropped.value.contains(index) {  // the summary says why
                    dropped.set(dropped.value.union([index]))
                    board.rename(index, to: "mirror \(index) dropped")
                }
            }
        }
        let interrupt = onInterrupt { download.cancel() }
        defer { interrupt.cancel() }
        let display = board.startDisplaying()
        let outcome = await download.timeout(seconds: timeout).asPromise().asResult().async()
        let seconds = Date().timeIntervalSince(started)
        display.cancel()
        board.render(final: true)
        let result: SegmentedDownloadResult
        switch outcome {
        case .success(let value):
            result = value
        case .failure(let error):
            say("The segmented download failed: \(error)")
            throw ExitCode(error.isCancelled ? 130 : 1)
        }
        await waitForConnections(server, mirrors: kibPerSecond.count)
        let sent = kibPerSecond.indices.map { server.stats(of: $0).bytesSent }.reduce(0, +)
        say(
            "  \(format(bytes: fileSize)) in \(String(format: "%.2f", seconds)) s, "
                + String(format: "%.0f%% of the ideal %.2f s", ideal / seconds * 100, ideal) + "."
        )
        for (index, mirror) in result.mirrors.enumerated() {
            say(
                "  mirror \(index): \(format(bytes: Int(mirror.bytesWritten))) of the file"
                    + (mirror.dropped.map { "; dropped: \($0)" } ?? "")
            )
        }
        let matches = (try? Data(contentsOf: destination)) == source
        say(
            matches
                ? "  The file matches the source byte for byte." : "  The file does NOT match the source."
        )
        if !matches { throw ExitCode(1) }
        return Cost(seconds: seconds, bytesSent: sent, fileSize: fileSize, ideal: ideal)
    }
}
