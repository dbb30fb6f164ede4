// A segmented download, and a single-URL resumable one, killed with SIGKILL part-way through — between two writes,
// or at a moment chosen by a timer wherever it lands — and resumed from the last checkpoint it saved: the checkpoint
// names only bytes that are on disk, and the resume finishes the file byte for byte without asking for any byte it
// names. Killed before its
// first checkpoint, it leaves a partial file that `DownloadResumeData.discardPartialFiles` removes. Each kill is a
// child process of this program; the parent serves the mirrors, checks what the child left, and resumes it.
//
//     swift run crash-recovery                                   # every kill point
//     crash-recovery --child DIR CHECKPOINT BYTES|@MS MIRROR...  # one child (internal)
//
// The last line is "N passed, N failed"; the exit status is non-zero if any kill point failed.

import Cancellable
import CancellableURLSession
import Dispatch
import Foundation
import LoopbackHTTPServer
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

#if os(macOS) || os(Linux)

/// The file the mirrors serve, and how it is cut.
enum Fixture {
    static let size = 1_048_576 + 4_321
    /// Every 4 bytes are their own offset: a byte at the wrong place shows.
    static var body: Data {
        let words = (0..<UInt32((size + 3) / 4)).map(\.littleEndian)
        return words.withUnsafeBytes { Data($0.prefix(size)) }
    }

    static var options: SegmentedDownloadOptions {
        var options = SegmentedDownloadOptions()
        options.segmentSize = 64 * 1_024
        options.minimumSplitSize = 16 * 1_024
        return options
    }

    /// A mirror of the file at `bytesPerSecond`.
    static func mirror(bytesPerSecond: Int) -> LoopbackHTTPServer.Resource {
        LoopbackHTTPServer.Resource(
            body: body,
            entityTag: "\"crash-1\"",
            chunkSize: 8_192,
            bytesPerSecond: bytesPerSecond
        )
    }
}

/// The child: downloads from the mirrors into `directory`, saves a checkpoint (atomically) every 48 KiB, and kills
/// itself once `kill` bytes are written (`BYTES`), or `kill` milliseconds after it starts (`@MS`).
func child(_ arguments: [String]) -> Never {
    let directory = URL(fileURLWithPath: arguments[0])
    let checkpointFile = URL(fileURLWithPath: arguments[1])
    let killAt = arguments[2]
    let mirrors = arguments.dropFirst(3).compactMap(URL.init(string:))
    let session = URLSession.withProgressReporting(configuration: .ephemeral)
    let threshold = Int64(killAt)
    if killAt.hasPrefix("@"), let milliseconds = Int(killAt.dropFirst()) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { kill(getpid(), SIGKILL) }
    }
    let download = Locked<SegmentedDownload?>(nil)
    let saved = Locked<Int64>(0)
    let made = session.resumableSegmentedDownload(
        from: mirrors,
        to: directory.appendingPathComponent("file.bin"),
        options: Fixture.options
    ) { progress in
        if let threshold, progress.bytesWritten >= threshold { kill(getpid(), SIGKILL) }
        guard progress.bytesWritten >= saved.withLock({ $0 }) + 48 * 1_024,
            let checkpoint = download.withLock({ $0 })?.checkpoint(),
            let json = try? JSONEncoder().encode(checkpoint),
            (try? json.write(to: checkpointFile, options: .atomic)) != nil
        else { return }
        saved.withLock { $0 = checkpoint.bytesKept }
    }
    download.withLock { $0 = made }
    made.promise
        .done(on: .global()) { _ in
            print("the download finished before it was killed")
            exit(3)
        }
        .catch(on: .global()) { error in
            print("the download failed before it was killed: \(error)")
            exit(4)
        }
    DispatchQueue.global().asyncAfter(deadline: .now() + 60) {
        print("the download did not end")
        exit(5)
    }
    while true { pause() }
}

/// The child of a single-URL download: as `child`, from the one mirror, with `ResumableDownload.checkpoint()`.
func singleChild(_ arguments: [String]) -> Never {
    let directory = URL(fileURLWithPath: arguments[0])
    let checkpointFile = URL(fileURLWithPath: arguments[1])
    let killAt = arguments[2]
    guard let mirror = arguments.dropFirst(3).first.flatMap(URL.init(string:)) else { exit(6) }
    let session = URLSession.withProgressReporting(configuration: .ephemeral)
    let threshold = Int64(killAt)
    if killAt.hasPrefix("@"), let milliseconds = Int(killAt.dropFirst()) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { kill(getpid(), SIGKILL) }
    }
    let download = Locked<ResumableDownload?>(nil)
    let saved = Locked<Int64>(0)
    let made = session.resumableDownload(from: mirror, to: directory.appendingPathComponent("file.bin")) { progress in
        if let threshold, progress.bytesTransferred >= threshold { kill(getpid(), SIGKILL) }
        guard progress.bytesTransferred >= saved.withLock({ $0 }) + 48 * 1_024,
            let checkpoint = download.withLock({ $0 })?.checkpoint(),
            let json = try? JSONEncoder().encode(checkpoint),
            (try? json.write(to: checkpointFile, options: .atomic)) != nil
        else { return }
        saved.withLock { $0 = checkpoint.bytesKept }
    }
    download.withLock { $0 = made }
    made.promise
        .done(on: .global()) { _ in
            print("the download finished before it was killed")
            exit(3)
        }
        .catch(on: .global()) { error in
            print("the download failed before it was killed: \(error)")
            exit(4)
        }
    DispatchQueue.global().asyncAfter(deadline: .now() + 60) {
        print("the download did not end")
        exit(5)
    }
    while true { pause() }
}

/// Waits for a cancellable promise's outcome, off the main queue.
func outcome<T>(of promise: CancellablePromise<T>) -> Swift.Result<T, Error> {
    let result = Locked<Swift.Result<T, Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    promise.asPromise()
        .done(on: .global()) { value in result.withLock { $0 = .success(value) } }
        .catch(on: .global()) { error in result.withLock { $0 = .failure(error) } }
        .finally(on: .global()) { done.signal() }
    done.wait()
    return result.withLock { $0! }
}

/// The files in `directory`, sorted.
func contents(of directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
}

/// Kills a child at `killAt`, then checks its checkpoint and resumes from it; a failure message, or nil. A single
/// mirror with `single` runs a single-URL `resumableDownload`; otherwise a segmented one.
func run(
    killAt: String,
    server: LoopbackHTTPServer,
    mirrors: [URL],
    session: URLSession,
    single: Bool = false
) throws -> String? {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("crash-recovery-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let checkpointFile = directory.appendingPathComponent("checkpoint.json")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
    if !FileManager.default.fileExists(atPath: "/proc/self/exe") {
        process.executableURL = Bundle.main.executableURL
    }
    process.arguments =
        [single ? "--single-child" : "--child", directory.path, checkpointFile.path, killAt]
        + mirrors.map(\.absoluteString)
    let pipe = Pipe()
    process.standardOutput = pipe
    process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationReason == .uncaughtSignal, process.terminationStatus == SIGKILL else {
        return "the child was not killed: \(output.trimmingCharacters(in: .whitespacesAndNewlines))"
    }
    guard let json = try? Data(contentsOf: checkpointFile) else {
        // Killed before its first checkpoint: nothing to resume from; the partial file is all it left, and nothing
        // names it but the cleanup an app runs at launch.
        let left = contents(of: directory)
        guard left.count == 1, left[0].hasSuffix(".partial") else { return "left \(left) and no checkpoint" }
        let removed = try DownloadResumeData.discardPartialFiles(for: directory.appendingPathComponent("file.bin"))
        let after = contents(of: directory)
        return removed.map(\.lastPathComponent) == left && after.isEmpty
            ? nil : "the cleanup removed \(removed) and left \(after)"
    }
    if single { return try resumeSingle(from: json, server: server, session: session, directory: directory) }
    // Read back as any app would: untrusted until decoded.
    let checkpoint = try JSONDecoder().decode(SegmentedDownloadResumeData.self, from: json)
    // The cleanup an app runs at launch, keeping what its checkpoint names: the crash left nothing else.
    let removed = try DownloadResumeData.discardPartialFiles(
        for: checkpoint.destination,
        except: [checkpoint.partialFile]
    )
    guard removed.isEmpty else { return "the cleanup removed \(removed), which the checkpoint names" }
    let partial = try Data(contentsOf: checkpoint.partialFile)
    let expected = Fixture.body
    for range in checkpoint.keptRanges {
        let bounds = Int(range.lowerBound)..<Int(range.upperBound)
        guard range.upperBound <= partial.count, partial[bounds] == expected[bounds] else {
            return "the checkpoint names \(range), which is not on disk as the file's bytes"
        }
    }
    let before = server.connections.count
    let resumed = session.resumeSegmentedDownload(checkpoint, options: Fixture.options)
    guard case .success(let result) = outcome(of: resumed.promise) else {
        return "the resume failed: \(outcome(of: resumed.promise))"
    }
    let file = try Data(contentsOf: result.url)
    guard file == expected else { return "the resumed file is not the source's bytes" }
    for connection in server.connections.dropFirst(before) {
        guard let header = connection.range, header.hasPrefix("bytes=") else { continue }
        let bounds = header.dropFirst(6).split(separator: "-").compactMap { Int64($0) }
        guard bounds.count == 2 else { continue }
        let asked = bounds[0]..<(bounds[1] + 1)
        if checkpoint.keptRanges.contains(where: { $0.overlaps(asked) }) {
            return "the resume asked for \(asked), which the checkpoint names"
        }
    }
    let left = contents(of: directory).filter { $0 != "checkpoint.json" }
    guard left == ["file.bin"] else { return "the folder holds \(left)" }
    print("        kept \(checkpoint.bytesKept) of \(Fixture.size) bytes in \(checkpoint.keptRanges.count) ranges")
    return nil
}

/// Checks a single-URL download's last checkpoint (`json`) and resumes from it; a failure message, or nil.
func resumeSingle(from json: Data, server: LoopbackHTTPServer, session: URLSession, directory: URL) throws -> String? {
    let checkpoint = try JSONDecoder().decode(DownloadResumeData.self, from: json)
    let removed = try DownloadResumeData.discardPartialFiles(
        for: checkpoint.destination,
        except: [checkpoint.partialFile]
    )
    guard removed.isEmpty else { return "the cleanup removed \(removed), which the checkpoint names" }
    let partial = try Data(contentsOf: checkpoint.partialFile)
    let expected = Fixture.body
    let kept = Int(checkpoint.bytesKept)
    guard kept <= partial.count, partial.prefix(kept) == expected.prefix(kept) else {
        return "the checkpoint names \(kept) bytes, which are not on disk as the file's bytes"
    }
    let before = server.connections.count
    let resumed = session.resumeDownload(checkpoint)
    guard case .success(let (url, _)) = outcome(of: resumed.promise) else {
        return "the resume failed: \(outcome(of: resumed.promise))"
    }
    guard try Data(contentsOf: url) == expected else { return "the resumed file is not the source's bytes" }
    let asked = server.connections.dropFirst(before).map(\.range)
    guard asked == ["bytes=\(kept)-"] else { return "the resume asked for \(asked), not only the bytes after \(kept)" }
    let left = contents(of: directory).filter { $0 != "checkpoint.json" }
    guard left == ["file.bin"] else { return "the folder holds \(left)" }
    print("        kept \(kept) of \(Fixture.size) bytes")
    return nil
}

let arguments = CommandLine.arguments
if arguments.count >= 5, arguments[1] == "--child" {
    child(Array(arguments.dropFirst(2)))
}
if arguments.count >= 5, arguments[1] == "--single-child" {
    singleChild(Array(arguments.dropFirst(2)))
}

let fast = Fixture.mirror(bytesPerSecond: 1_048_576)
let slow = Fixture.mirror(bytesPerSecond: 512 * 1_024)
let server = try LoopbackHTTPServer { request in .resource(request.path == "/slow" ? slow : fast) }
let mirrors = [server.url("/fast"), server.url("/slow")]
let session = URLSession.withProgressReporting(configuration: .ephemeral)
// At the first write, before any checkpoint (the partial file is left for the launch cleanup); between two writes,
// at every fifth of the file; and at moments a timer picks, wherever they land.
let killPoints = ["1"] + [1, 2, 3, 4].map { String(Fixture.size * $0 / 5) } + ["@150", "@350", "@550"]
var passed = 0
var failed = 0
// Each kill point for a segmented download of both mirrors, then for a single-URL download of the slow one.
for (killAt, single) in killPoints.map({ ($0, false) }) + killPoints.map({ ($0, true) }) {
    let kind = single ? "single-URL" : "segmented"
    let label =
        killAt.hasPrefix("@") ? "\(kind) killed after \(killAt.dropFirst()) ms" : "\(kind) killed at byte \(killAt)"
    do {
        let sources = single ? [mirrors[1]] : mirrors
        if let failure = try run(killAt: killAt, server: server, mirrors: sources, session: session, single: single) {
            failed += 1
            print("FAILED  \(label): \(failure)")
        } else {
            passed += 1
            print("ok      \(label)")
        }
    } catch {
        failed += 1
        print("FAILED  \(label): \(error)")
    }
}
server.stop()
print("\(passed) passed, \(failed) failed")
exit(failed == 0 ? 0 : 1)
#else
print("crash-recovery runs each kill in a child process: run it on macOS or Linux")
exit(2)
#endif
