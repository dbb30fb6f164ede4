import ArgumentParser
import Cancellable
import CancellableURLSession
import Dispatch
import Foundation
import MirrorServer
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
            its own speed, then downloads from all of them with race(fulfilled:autoCancel: true). When the \
            fastest finishes, the others are cancelled; the summary shows, measured by the server, how many bytes \
            each loser had received and how soon after the winner finished its connection was closed. Ctrl-C \
            cancels every download.

            With --mirror-down, the fastest mirror goes down a quarter of the way through (its connection closes \
            mid-body): its download fails, which does not end the race, and the next-fastest wins.

            With --stall, the fastest mirror stops sending part-way. When it has sent nothing for a moment, its \
            download is paused (keeping its bytes), the race is stopped, and the download resumes from the \
            next-fastest mirror at the byte where it stopped; the summary shows the bytes every server sent and \
            the bytes resuming saved.

            With --stall --mirror-down, the next-fastest mirror goes down while the download is paused (its port \
            refuses connections): the resume from it fails, keeping every byte, and the download fails over to \
            the third mirror.

            With --segmented, the file is pulled from every mirror at once, in segments (segmentedDownload), after \
            a race of the same mirrors; the summary compares their time and the bytes the servers sent that are \
            not in the file. With --segmented --mirror-down, the second-fastest mirror goes down half-way through \
            its share: its segment goes to the others, and no byte is lost.
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

    @Flag(help: "The fastest mirror stalls part-way; the download resumes from the next-fastest mirror.")
    var stall = false

    @Option(help: "With --stall: how far into the file the fastest mirror stalls, as a fraction.")
    var stallAt: Double = 0.5

    @Option(help: "With --stall: seconds without a byte that count as a stall.")
    var stallTimeout: Double = 0.5

    @Flag(help: "The mirrors ignore ranges (every answer is 200): a resume starts over from byte 0.")
    var ignoreRanges = false

    @Flag(
        help:
            "With --stall: the file changes on every mirror while the download is paused: the resume's If-Range fails."
    )
    var changeFile = false

    @Flag(
        help: ArgumentHelp(
            "The fastest mirror goes down part-way; the race goes on without it. With --stall: the next-fastest "
                + "mirror goes down while the download is paused; the resume fails over to a third."
        )
    )
    var mirrorDown = false

    @Flag(help: "Pull the file from every mirror at once, in segments, and compare with the race.")
    var segmented = false

    mutating func validate() throws {
        guard size > 0 else { throw ValidationError("--size must be positive") }
        guard speeds.isEmpty ? mirrors >= 1 : speeds.allSatisfy({ $0 > 0 }) else {
            throw ValidationError("need at least one mirror, each with a positive speed")
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        guard stallAt > 0 && stallAt < 1 else { throw ValidationError("--stall-at must be between 0 and 1") }
        guard stallTimeout > 0 else { throw ValidationError("--stall-timeout must be positive") }
        if stall && (speeds.isEmpty ? mirrors : speeds.count) < 2 {
            throw ValidationError("--stall needs at least two mirrors: one to stall, one to resume from")
        }
        if segmented && (stall || ignoreRanges || changeFile) {
            throw ValidationError("--segmented takes --mirror-down, not --stall, --ignore-ranges or --change-file")
        }
        if segmented && mirrorDown && (speeds.isEmpty ? mirrors : speeds.count) < 2 {
            throw ValidationError("--segmented --mirror-down needs two mirrors: one goes down, one finishes")
        }
        if mirrorDown && !segmented && stall && (speeds.isEmpty ? mirrors : speeds.count) < 3 {
            throw ValidationError(
                "--stall --mirror-down needs three mirrors: one stalls, one is down, one finishes"
            )
        }
        if mirrorDown && !segmented && !stall && (speeds.isEmpty ? mirrors : speeds.count) < 2 {
            throw ValidationError("--mirror-down needs two mirrors: one goes down, one finishes")
        }
    }

    func run() async throws {
        let kibPerSecond = speeds.isEmpty ? (0..<mirrors).map { max(1, 4_096 >> $0) } : speeds
        let fileSize = Int(size * 1_048_576)
        if segmented { return try await runSegmented(kibPerSecond: kibPerSecond, fileSize: fileSize) }
        // Mirrors by speed, fastest first: with --stall, the fastest stalls and the next one takes over.
        let bySpeed = kibPerSecond.indices.sorted { kibPerSecond[$0] > kibPerSecond[$1] }
        let server = MirrorServer(
            fileSize: fileSize,
            bytesPerSecond: kibPerSecond.map { $0 * 1_024 },
            stallsAt: stall ? [bySpeed[0]: Int(Double(fileSize) * stallAt)] : [:],
            diesAfter: mirrorDown && !stall ? [bySpeed[0]: fileSize / 4] : [:],
            ignoresRanges: ignoreRanges,
            changesFile: changeFile
        )
        let (port, serverTask) = try await server.start()
        defer { serverTask.cancel() }
        say("Serving \(format(bytes: fileSize)) from \(kibPerSecond.count) mirrors on 127.0.0.1:\(port)")
        func mirrorURL(_ mirror: Int, port: Int = port) -> URL {
            URL(string: "http://127.0.0.1:\(port)/mirror/\(mirror)/file.bin")!
        }

        let session = URLSession.withProgressReporting(configuration: .ephemeral)
        let progress = ProgressBoard(
            names: kibPerSecond.enumerated().map { "mirror \($0.offset) (\($0.element) KiB/s)" }
        )
        let temporary = FileManager.default.temporaryDirectory
        let destinations = kibPerSecond.indices.map {
            temporary.appendingPathComponent("mirror-race-\(UUID())-\($0).bin")
        }
        defer { destinations.forEach { try? FileManager.default.removeItem(at: $0) } }

        // Every mirror serves the same file: a download that arrives with another length is rejected.
        let expected = DownloadIntegrity(length: Int64(fileSize))
        let downloads = kibPerSecond.indices.map { mirror in
            session.resumableDownload(
                for: URLRequest(url: mirrorURL(mirror)),
                to: destinations[mirror],
                verifying: expected
            ) {
                progress.update(mirror, $0)
            }
        }
        let started = Date()
        let scope = CancelScope()
        let winner = scope.add(
            race(
                fulfilled: downloads.enumerated().map { index, download in
                    download.promise.map(on: nil) { _ in index }
                },
                autoCancel: true
            )
            .timeout(seconds: timeout)
        )

        // Ctrl-C cancels the race, which cancels every download (and, with --stall, the resumed one).
        let interrupt = onInterrupt { scope.cancelAll() }
        defer { interrupt.cancel() }
        // With --stall: pause a download that stops receiving; it keeps its bytes. A failure does not end a
        // race(fulfilled:), so the example stops the race itself (the other downloads are cancelled) and resumes the
        // paused one from the next-fastest mirror, at the byte where it stopped.
        let stalled = Locked<Int?>(nil)
        let watchdog =
            stall
            ? progress.watchForStall(after: stallTimeout) { mirror in
                stalled.set(mirror)
                downloads[mirror].pause()
                winner.cancel()
            } : nil
        defer { watchdog?.cancel() }

        let display = progress.startDisplaying()
        let outcome = await winner.asPromise().asResult().async()
        let decidedAt = Date()
        watchdog?.cancel()

        if let stalledMirror = stalled.value, case .failure = outcome,
            let paused = await downloads[stalledMirror].resumeData.async()
        {
            var resumeData = paused
            server.release(stalledMirror)  // the stalled mirror closes its connection
            var candidates = bySpeed.filter { $0 != stalledMirror }
            var next = candidates.removeFirst()
            progress.rename(stalledMirror, to: "mirror \(stalledMirror) → \(next)")
            var failover: Failover?
            if mirrorDown {
                // The next mirror went down while the download was paused: nothing listens on its port any more.
                let down = try DownPort()
                let attempt = session.resumeDownload(
                    resumeData,
                    from: URLRequest(url: mirrorURL(next, port: down.port))
                )
                let failed = await scope.add(attempt.promise).asPromise().asResult().async()
                if case .failure(let error) = failed, error.isCancelled { throw ExitCode(130) }
                guard case .failure(let error) = failed, let kept = await attempt.resumeData.async() else {
                    say("The resume from the mirror that is down did not fail keeping its bytes: \(failed)")
                    throw ExitCode(1)
                }
                failover = Failover(mirror: next, error: error, bytesKept: kept.bytesKept)
                resumeData = kept
                next = candidates.removeFirst()
                progress.rename(stalledMirror, to: "mirror \(stalledMirror) → \(failover!.mirror) (down) → \(next)")
            }
            let resumedAt = Date()
            let resumed = scope.add(
                session.resumeDownload(resumeData, from: URLRequest(url: mirrorURL(next))) {
                    progress.update(stalledMirror, $0)
                }
                .promise
                .timeout(seconds: timeout)
            )
            let resumedOutcome = await resumed.asPromise().asResult().async()
            display.cancel()
            progress.render(final: true)
            await waitForConnections(server, mirrors: kibPerSecond.count)
            let intact = summarizeResume(
                resumedOutcome,
                stalled: stalledMirror,
                failover: failover,
                next: next,
                resumeData: paused,
                resumedAt: resumedAt,
                server: server,
                mirrors: kibPerSecond.count
            )
            if case .failure(let error) = resumedOutcome {
                throw ExitCode(error.isCancelled ? 130 : 1)
            }
            if !intact { throw ExitCode(1) }
            return
        }

        display.cancel()
        progress.render(final: true)
        server.stallsAt.keys.forEach(server.release)
        // A resumable download that failed (a mirror that went down) kept its bytes for a resume: this example will
        // not resume it, so it discards them. (The winner's and the cancelled losers' have no resume data.)
        for download in downloads {
            await download.resumeData.async()?.discard()
        }
        await waitForConnections(server, mirrors: kibPerSecond.count)
        if stall {
            say("(No stall was noticed before a mirror finished: try a larger --size.)")
        }
        summarize(
            outcome,
            elapsed: decidedAt.timeIntervalSince(started),
            fileSize: fileSize,
            server: server,
            mirrors: kibPerSecond.count,
            down: mirrorDown && !stall ? bySpeed[0] : nil
        )
        if case .failure(let error) = outcome {
            throw ExitCode(error.isCancelled ? 130 : 1)
        }
    }

    /// Gives the server a moment to see every connection end: it is what the summary reports.
    func waitForConnections(_ server: MirrorServer, mirrors: Int) async {
        await waitUntil(seconds: 2) {
            (0..<mirrors).allSatisfy {
                server.stats(of: $0).finishedAt != nil || server.stats(of: $0).clientClosedAt != nil
            }
        }
    }

    /// A resume that failed because its mirror was down, and what it kept for the next one.
    struct Failover {
        let mirror: Int
        let error: Error
        let bytesKept: Int64
    }

    private func summarizeResume(
        _ outcome: Swift.Result<(url: URL, response: URLResponse), Error>,
        stalled: Int,
        failover: Failover?,
        next: Int,
        resumeData: DownloadResumeData,
        resumedAt: Date,
        server: MirrorServer,
        mirrors: Int
    ) -> Bool {
        let (source, _) = server.current
        let fileSize = source.count
        let kept = Int(resumeData.bytesKept)
        say()
        say(
            "Mirror \(stalled) stalled after \(format(bytes: kept)) (\(kept * 100 / fileSize)%); paused, keeping the "
                + "\(format(bytes: kept)) it had. The other mirrors were cancelled."
        )
        var intact = true
        if let failover {
            let why = (failover.error as? URLError).map { "URLError \($0.code.rawValue)" } ?? "\(failover.error)"
            let keptAgain = failover.bytesKept == resumeData.bytesKept  // the failed resume kept what the pause had
            say(
                "Mirror \(failover.mirror) went down while the download was paused: the resume from it failed "
                    + "(\(why), the connection was refused) and "
                    + (keptAgain
                        ? "kept all \(format(bytes: kept)); failing over to mirror \(next)."
                        : "kept only \(failover.bytesKept) of \(kept) bytes.")
            )
            intact = keptAgain
        }
        switch outcome {
        case .success(let (file, response)):
            let elapsed = String(format: "%.2f", Date().timeIntervalSince(resumedAt))
            let continued = (response as? HTTPURLResponse)?.statusCode == 206
            let resumedBytes = server.stats(of: next).latestResponseBytes
            if continued {
                say(
                    "Resumed from mirror \(next) at byte \(kept): \(format(bytes: resumedBytes)) more, in \(elapsed) s."
                )
            } else {
                let why = ignoreRanges ? "it ignores ranges" : "the file changed, so If-Range did not match"
                say(
                    "Mirror \(next) answered 200 with the whole file (\(why)): the download started over from byte 0, "
                        + "and the \(format(bytes: kept)) kept were dropped, in \(elapsed) s."
                )
            }
            let perMirror = (0..<mirrors).map { "mirror \($0) \(format(bytes: server.stats(of: $0).bytesSent))" }
            let total = (0..<mirrors).map { server.stats(of: $0).bytesSent }.reduce(0, +)
            say(
                "All servers sent \(format(bytes: total)) for the \(format(bytes: fileSize)) file, losers included: "
                    + perMirror.joined(separator: ", ") + "."
            )
            if continued {
                let fetched = kept + resumedBytes
                let twice =
                    fetched == fileSize
                    ? "no byte of it was sent twice" : "\(format(bytes: fetched - fileSize)) more than the file"
                say(
                    "The file itself: \(format(bytes: kept)) from mirror \(stalled) + \(format(bytes: resumedBytes)) "
                        + "from mirror \(next) = \(format(bytes: fetched)); \(twice)."
                )
                say(
                    "Resuming saved \(format(bytes: kept)): starting over on mirror \(next) would have needed all "
                        + "\(format(bytes: fileSize)) again."
                )
            }
            let matches = (try? Data(contentsOf: file)) == source
            say(matches ? "The file matches the source byte for byte." : "The file does NOT match the source.")
            return matches && intact
        case .failure(let error):
            say("The resumed download failed: \(error)")
            reportServerSide(server, mirrors: mirrors)
            return false
        }
    }

    private func summarize(
        _ outcome: Swift.Result<Int, Error>,
        elapsed: TimeInterval,
        fileSize: Int,
        server: MirrorServer,
        mirrors: Int,
        down: Int?
    ) {
        say()
        if let down {
            let sent = server.stats(of: down).bytesSent
            say(
                "Mirror \(down) went down after \(format(bytes: sent)) (its connection closed mid-body): its download "
                    + "failed, and the race went on without it."
            )
        }
        switch outcome {
        case .success(let winner):
            let finishedAt = server.stats(of: winner).finishedAt ?? Date()
            say("Winner: mirror \(winner) — \(format(bytes: fileSize)) in \(String(format: "%.2f", elapsed)) s")
            var loserBytes = 0
            for mirror in 0..<mirrors where mirror != winner && mirror != down {
                let stats = server.stats(of: mirror)
                loserBytes += stats.bytesSent
                let closed =
                    stats.clientClosedAt.map {
                        "connection closed \(Int($0.timeIntervalSince(finishedAt) * 1_000)) ms after the winner "
                            + "finished"
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

/// A value shared between threads, behind a lock.
final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `stored` is only touched under `lock`.
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) {
        stored = value
    }

    var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    func set(_ value: Value) {
        lock.lock()
        stored = value
        lock.unlock()
    }
}
